import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { DocumentExtractionError } from '../../src/documents/document-extraction-error';
import { detectDocumentFormat } from '../../src/documents/document-format';
import { extractText, extractTextFromBytes } from '../../src/documents/extract-text';
import { makeDocx, makePdf } from '../fakes/documents';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-extract-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function file(name: string, content: string | Uint8Array): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

async function assertExtractionError(
  promise: Promise<unknown>,
  problem: DocumentExtractionError['problem'],
  pattern: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DocumentExtractionError, `expected a DocumentExtractionError, got ${String(error)}`);
    assert.equal(error.problem, problem);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('extractText', () => {
  test('PDF made with pdf-lib: text of every page, title from the metadata, page count', async () => {
    const path = file(
      'report.pdf',
      await makePdf(
        [['BYD sold 4,272,145 vehicles in 2024.', 'Second line of page one.'], ['Tesla delivered 1,789,226.']],
        'EV report 2024',
      ),
    );
    const document = await extractText(path);
    assert.equal(document.format, 'pdf');
    assert.equal(document.title, 'EV report 2024');
    assert.equal(document.pages, 2);
    assert.match(document.text, /BYD sold 4,272,145 vehicles in 2024\./);
    assert.match(document.text, /Second line of page one\./);
    assert.match(document.text, /Tesla delivered 1,789,226\./);
    assert.ok(document.text.indexOf('BYD') < document.text.indexOf('Tesla'), 'pages stay in order');
  });

  test('Word document made with docx: paragraphs as markdown, title from the first heading', async () => {
    const path = file(
      'notes.docx',
      await makeDocx('Quarterly notes', [
        'Tesla delivered 495,570 vehicles in Q4 2024.',
        'BYD sold about 515,000 in December.',
      ]),
    );
    const document = await extractText(path);
    assert.equal(document.format, 'docx');
    assert.equal(document.title, 'Quarterly notes');
    assert.match(document.text, /Quarterly notes/);
    assert.match(
      document.text,
      /Tesla delivered 495,570 vehicles in Q4 2024\.\n\nBYD sold about 515,000 in December\./,
    );
  });

  test('HTML: main content as markdown, title from <title>, scripts dropped', async () => {
    const article =
      '<p>BYD became the largest seller of plug-in vehicles in 2024, with 4.27 million sold. This paragraph is long enough to count as an article for Readability, which wants a couple of hundred characters of text.</p>';
    const path = file(
      'page.html',
      `<!doctype html><html><head><title>EV sales 2024</title><script>var secret = 1;</script></head><body><nav>Home | About</nav><article><h1>EV sales 2024</h1>${article}<ul><li>BYD</li><li>Tesla</li></ul></article></body></html>`,
    );
    const document = await extractText(path);
    assert.equal(document.format, 'html');
    assert.equal(document.title, 'EV sales 2024');
    assert.match(document.text, /largest seller of plug-in vehicles/);
    assert.match(document.text, /-\s+BYD/);
    assert.doesNotMatch(document.text, /secret|<p>/);
  });

  test('markdown: kept as written, title from the first heading, CRLF normalised', async () => {
    const document = await extractText(file('notes.md', '# Battery chemistry\r\n\r\nLFP is cheaper than **NMC**.\r\n'));
    assert.deepEqual(document, {
      format: 'markdown',
      title: 'Battery chemistry',
      text: '# Battery chemistry\n\nLFP is cheaper than **NMC**.\n',
    });
  });

  test('CSV: the rows as they are', async () => {
    const document = await extractText(
      file('sales.csv', 'company,year,vehicles\r\nBYD,2024,4272145\r\n"Tesla, Inc.",2024,1789226\r\n'),
    );
    assert.equal(document.format, 'csv');
    assert.equal(document.text, 'company,year,vehicles\nBYD,2024,4272145\n"Tesla, Inc.",2024,1789226\n');
  });

  test('JSON: pretty-printed; JSON that does not parse is returned as it is', async () => {
    const pretty = await extractText(file('data.json', '{"company":"BYD","sales":{"2024":4272145}}'));
    assert.equal(pretty.format, 'json');
    assert.equal(pretty.text, '{\n  "company": "BYD",\n  "sales": {\n    "2024": 4272145\n  }\n}');
    const broken = await extractText(file('broken.json', '{"company": "BYD",'));
    assert.equal(broken.text, '{"company": "BYD",');
  });

  test('plain text, UTF-8 with a BOM and UTF-16 with a BOM', async () => {
    assert.deepEqual(await extractText(file('plain.txt', '\uFEFFBYD 比亚迪 sold more.\n')), {
      format: 'text',
      text: 'BYD 比亚迪 sold more.\n',
    });
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Tesla 特斯拉', 'utf16le')]);
    assert.equal((await extractText(file('wide.txt', utf16))).text, 'Tesla 特斯拉');
  });

  test('files without a known extension are recognised by their content', async () => {
    assert.equal((await extractText(file('download-1', await makePdf([['Sniffed PDF text.']])))).format, 'pdf');
    assert.equal((await extractText(file('download-2', await makeDocx('Sniffed', ['Word text.'])))).format, 'docx');
    assert.equal(
      (
        await extractText(
          file('download-3', '<!DOCTYPE html><html><head><title>T</title></head><body><p>Hi</p></body></html>'),
        )
      ).format,
      'html',
    );
    assert.equal((await extractText(file('download-4', '[1, 2, 3]'))).format, 'json');
    assert.equal((await extractText(file('script.py', 'print("hello")\n'))).format, 'text');
    assert.equal(detectDocumentFormat('README', Buffer.from('Just words.')), 'text');
  });

  test('unsupported types fail with a message that says what to do', async () => {
    await assertExtractionError(
      extractText(file('sheet.xlsx', 'PK\u0003\u0004 not really')),
      'unsupported',
      /sheet\.xlsx.*spreadsheets are not supported; export the sheet as CSV/,
    );
    await assertExtractionError(
      extractText(file('old.doc', 'whatever')),
      'unsupported',
      /save the file as \.docx or PDF/,
    );
    await assertExtractionError(
      extractText(file('photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]))),
      'unsupported',
      /images are not supported/,
    );
    await assertExtractionError(
      extractText(file('binary.txt', Buffer.from([0x41, 0, 0x42, 0]))),
      'unsupported',
      /its name says \.txt but it holds binary data/,
    );
    await assertExtractionError(
      extractText(file('blob.bin', Buffer.from([1, 2, 0, 3, 0, 4]))),
      'unsupported',
      /binary file of an unknown type.*Readable formats: PDF/,
    );
    await assertExtractionError(
      extractText(file('archive', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from('other.xml')]))),
      'unsupported',
      /ZIP archive/,
    );
  });

  test('a damaged PDF or docx is "unreadable", not a crash', async () => {
    await assertExtractionError(
      extractText(file('damaged.pdf', '%PDF-1.7\nthis is not a real pdf')),
      'unreadable',
      /damaged\.pdf/,
    );
    await assertExtractionError(
      extractText(file('damaged.docx', 'not a zip at all')),
      'unreadable',
      /damaged\.docx as a Word document/,
    );
  });

  test('files over the size cap are refused before they are read', async () => {
    const path = file('big.txt', 'x'.repeat(5_000));
    await assertExtractionError(
      extractText(path, { maxBytes: 1_024 }),
      'too-large',
      /big\.txt is 5 KB, over the 1 KB limit/,
    );
    await assertExtractionError(
      extractTextFromBytes(Buffer.alloc(3 * 1024 * 1024), 'upload.txt', { maxBytes: 2 * 1024 * 1024 }),
      'too-large',
      /3\.0 MB, over the 2\.0 MB limit/,
    );
    assert.equal((await extractText(path, { maxBytes: 5_000 })).text.length, 5_000);
  });

  test('an aborted signal stops extraction; a missing file is a file system error', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(extractText(file('any.txt', 'text'), { signal: controller.signal }), { name: 'AbortError' });
    await assert.rejects(extractText(join(scratch, 'missing.txt')), { code: 'ENOENT' });
  });
});
