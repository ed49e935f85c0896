import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { DocumentExtractionError } from '../../src/documents/document-extraction-error';
import { capText } from '../../src/documents/extract-text';
import { extractTextInThread } from '../../src/documents/extraction-thread';
import { docxBomb, makeDocx, makePdf, pdfBomb } from '../fakes/documents';

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DocumentExtractionError, `expected a DocumentExtractionError, got ${String(error)}`);
    assert.equal(error.problem, 'too-large');
    assert.match(error.message, pattern);
    return true;
  });
}

describe('extractTextInThread', () => {
  test('reads a normal .docx and PDF as extractText does', async () => {
    const word = await extractTextInThread({
      bytes: await makeDocx('Quarterly notes', ['Tesla delivered 495,570 vehicles.']),
      name: 'notes.docx',
    });
    assert.equal(word.format, 'docx');
    assert.equal(word.title, 'Quarterly notes');
    assert.match(word.text, /Tesla delivered 495,570 vehicles\./);
    const pdf = await extractTextInThread({
      bytes: await makePdf([['BYD sold 4,272,145 vehicles.']], 'EV report'),
      name: 'report.pdf',
    });
    assert.deepEqual({ ...pdf }, { text: 'BYD sold 4,272,145 vehicles.', format: 'pdf', pages: 1, title: 'EV report' });
  }, 60_000);

  test('a docx whose headers lie about its size is refused at the inflation limit', async () => {
    await refused(
      extractTextInThread({ bytes: docxBomb(24, 2_000), name: 'liar.docx' }, { maxInflatedBytes: 8 * 1024 * 1024 }),
      /liar\.docx is too large to read: it inflates past 8 MB/,
    );
  }, 60_000);

  test('a PDF whose stream inflates past the binary budget is refused, and the next document is read', async () => {
    await refused(
      extractTextInThread({ bytes: pdfBomb(64), name: 'bomb.pdf' }, { maxBinaryBytes: 16 * 1024 * 1024 }),
      /bomb\.pdf is too large to read: its content inflates past 16 MB of binary data/,
    );
    const next = await extractTextInThread(
      { bytes: await makePdf([['Still reading.']]), name: 'next.pdf' },
      { maxBinaryBytes: 16 * 1024 * 1024 },
    );
    assert.equal(next.text, 'Still reading.');
  }, 60_000);

  test('a document that takes longer than the time limit is refused, and one out of heap too', async () => {
    await refused(
      extractTextInThread({ bytes: docxBomb(12), name: 'slow.docx' }, { timeoutMs: 1_000 }),
      /slow\.docx took longer than 1 s to read/,
    );
    await refused(
      extractTextInThread({ bytes: docxBomb(12), name: 'heavy.docx' }, { heapMegabytes: 64 }),
      /heavy\.docx is too large to read: reading it needs more than 64 MB of memory/,
    );
  }, 120_000);

  test('an aborted signal ends the extraction with its reason', async () => {
    const controller = new AbortController();
    const reading = extractTextInThread({ bytes: docxBomb(12), name: 'cancelled.docx' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('activity cancelled')), 200);
    await assert.rejects(reading, /activity cancelled/);
  }, 60_000);

  test('the text is cut at the limit with a note', async () => {
    const document = await extractTextInThread(
      { bytes: Buffer.from('x'.repeat(5_000)), name: 'long.txt' },
      { maxTextCharacters: 1_000 },
    );
    assert.equal(document.text, capText('x'.repeat(5_000), 1_000));
    assert.match(
      document.text,
      /^x{1000}\n\n\[Text cut: the first 1,000 characters of 5,000 \(the limit for one document\)\.\]$/,
    );
  }, 60_000);
});
