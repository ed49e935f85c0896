/**
 * The document-extraction thread's entry (started by `extraction-thread.ts`, never imported
 * elsewhere): limits binary allocations, then extracts each document it is sent, one at a time,
 * and posts the result or the error.
 */
import { parentPort } from 'node:worker_threads';
import { limitBinaryAllocations } from './binary-allocation-budget';
import { DocumentExtractionError } from './document-extraction-error';
import type { ExtractionRequest, ExtractionThreadReply } from './extraction-thread';

let current: ExtractionRequest | undefined;
const tooLarge = () =>
  new DocumentExtractionError(
    'too-large',
    `${current?.name ?? 'the document'} is too large to read: its content inflates past ${Math.round((current?.maxBinaryBytes ?? 0) / (1024 * 1024))} MB of binary data.`,
  );
// Before the readers load, so pdf.js's typed arrays are counted.
const budget = limitBinaryAllocations(tooLarge);

// Loaded after the budget is installed (a static import would be hoisted above it).
const { extractText, extractTextFromBytes } = require('./extract-text') as typeof import('./extract-text');

function reply(message: ExtractionThreadReply): void {
  parentPort?.postMessage(message);
}

async function extract(request: ExtractionRequest): Promise<void> {
  current = request;
  budget.reset(request.maxBinaryBytes);
  try {
    const document =
      request.path !== undefined
        ? await extractText(request.path, request.options)
        : await extractTextFromBytes(request.bytes ?? new Uint8Array(), request.name, request.options);
    if (budget.exceeded) throw tooLarge();
    reply({ document });
  } catch (error) {
    const failure = budget.exceeded ? tooLarge() : error;
    if (failure instanceof DocumentExtractionError)
      reply({ extractionError: { problem: failure.problem, message: failure.message } });
    else
      reply({
        otherError: {
          message: failure instanceof Error ? failure.message : String(failure),
          ...((failure as NodeJS.ErrnoException)?.code ? { code: (failure as NodeJS.ErrnoException).code } : {}),
        },
      });
  }
}

parentPort?.on('message', (request: ExtractionRequest) => void extract(request));
