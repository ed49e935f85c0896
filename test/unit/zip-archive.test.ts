import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { DocumentExtractionError } from '../../src/documents/document-extraction-error';
import { readZipEntries, readZipWithinLimits, storedZip } from '../../src/documents/zip-archive';
import { deflatedZip, makeDocx } from '../fakes/documents';

const MB = 1024 * 1024;
const limits = { maxInflatedBytes: 4 * MB, maxEntries: 100 };
const everything = () => true;

function refused(action: () => unknown, problem: DocumentExtractionError['problem'], pattern: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof DocumentExtractionError, `expected a DocumentExtractionError, got ${String(error)}`);
    assert.equal(error.problem, problem);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('readZipEntries', () => {
  test('lists the files of a real .docx with their declared sizes', async () => {
    const entries = readZipEntries(await makeDocx('Title', ['Text.']), 'notes.docx');
    const document = entries.find((entry) => entry.name === 'word/document.xml');
    assert.ok(document, `word/document.xml is listed among ${entries.map((entry) => entry.name).join(', ')}`);
    assert.equal(document.method, 8);
    assert.ok(document.uncompressedSize > document.compressedSize);
  });

  test('refuses an archive listing more files than allowed, and bytes that are not a ZIP', () => {
    const many = deflatedZip(
      Array.from({ length: 11 }, (_, index) => ({ name: `part${index}.xml`, content: Buffer.from('<a/>') })),
    );
    refused(() => readZipEntries(many, 'many.docx', 10), 'too-large', /lists 11 files, over the limit of 10/);
    refused(
      () => readZipEntries(Buffer.from('not a zip at all, just some text that is long enough'), 'text.docx'),
      'unreadable',
      /ZIP structure is damaged/,
    );
  });
});

describe('readZipWithinLimits', () => {
  test('inflates honest files within the limit, byte for byte; files not wanted come back empty', () => {
    const xml = Buffer.from('<w:document>' + 'text '.repeat(10_000) + '</w:document>');
    const picture = Buffer.alloc(3 * MB, 7);
    const files = readZipWithinLimits(
      deflatedZip([
        { name: 'word/document.xml', content: xml },
        { name: 'word/media/image1.png', content: picture },
      ]),
      'ok.docx',
      { ...limits, maxInflatedBytes: 1 * MB },
      (name) => name.endsWith('.xml'),
    );
    assert.deepEqual(files.get('word/document.xml'), xml);
    assert.equal(files.get('word/media/image1.png')?.length, 0, 'the picture is not inflated and does not count');
  });

  test('an archive that declares more than the limit is refused before anything is inflated', () => {
    const bomb = deflatedZip([{ name: 'word/document.xml', content: Buffer.alloc(5 * MB, 0x61) }]);
    refused(
      () => readZipWithinLimits(bomb, 'bomb.docx', limits, everything),
      'too-large',
      /bomb\.docx is too large to read: it inflates past 4 MB/,
    );
  });

  test('an archive whose headers lie about the size is stopped while inflating', () => {
    const liar = deflatedZip([{ name: 'word/document.xml', content: Buffer.alloc(64 * MB, 0x61), declaredSize: 1000 }]);
    assert.ok(liar.length < 200_000, `the bomb is small (${liar.length} bytes)`);
    const before = Date.now();
    refused(
      () => readZipWithinLimits(liar, 'liar.docx', limits, everything),
      'too-large',
      /liar\.docx is too large to read: it inflates past 4 MB/,
    );
    assert.ok(Date.now() - before < 5_000, 'stopped at the limit, not after inflating 64 MB');
  });

  test('the limit is for all files together, not each', () => {
    const parts = Array.from({ length: 5 }, (_, index) => ({
      name: `word/part${index}.xml`,
      content: Buffer.alloc(1 * MB, 0x62),
      declaredSize: 10,
    }));
    refused(
      () => readZipWithinLimits(deflatedZip(parts), 'parts.docx', limits, everything),
      'too-large',
      /inflates past 4 MB/,
    );
  });

  test('an encrypted entry or an unknown compression method is unreadable, not a crash', () => {
    const zip = deflatedZip([{ name: 'word/document.xml', content: Buffer.from('<a/>') }]);
    const encrypted = Buffer.from(zip);
    const central = encrypted.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    encrypted.writeUInt16LE(1, central + 8);
    refused(() => readZipWithinLimits(encrypted, 'secret.docx', limits, everything), 'unreadable', /encrypted/);
    const odd = Buffer.from(zip);
    odd.writeUInt16LE(12, central + 10);
    refused(() => readZipWithinLimits(odd, 'odd.docx', limits, everything), 'unreadable', /compression method 12/);
  });
});

describe('storedZip', () => {
  test('writes an archive the reader lists and reads back unchanged', () => {
    const files = new Map([
      ['[Content_Types].xml', Buffer.from('<Types/>')],
      ['word/document.xml', Buffer.from('<w:document>é</w:document>')],
      ['word/media/image1.png', Buffer.alloc(0)],
    ]);
    const archive = storedZip(files);
    assert.deepEqual(
      readZipEntries(archive, 'stored.docx').map((entry) => [entry.name, entry.method, entry.uncompressedSize]),
      [...files].map(([name, content]) => [name, 0, content.length]),
    );
    assert.deepEqual(readZipWithinLimits(archive, 'stored.docx', limits, everything), files);
  });
});
