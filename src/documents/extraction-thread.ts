import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DocumentExtractionError, type DocumentExtractionProblem } from './document-extraction-error';
import type { ExtractedDocument, ExtractTextOptions } from './extract-text';

/** Default of {@link IsolatedExtractionOptions.heapMegabytes}: 1,024. */
export const DEFAULT_EXTRACTION_HEAP_MEGABYTES = 1024;
/** Default of {@link IsolatedExtractionOptions.timeoutMs}: 120 s. */
export const DEFAULT_EXTRACTION_TIMEOUT_MS = 120_000;
/** Default of {@link IsolatedExtractionOptions.maxBinaryBytes}: 256 MB. */
export const DEFAULT_EXTRACTION_BINARY_BYTES = 256 * 1024 * 1024;

/** Options of {@link extractTextInThread}: the extraction's own limits and those of its thread. */
export interface IsolatedExtractionOptions extends Omit<ExtractTextOptions, 'signal'> {
  /** The thread's V8 heap (old generation); past it the thread dies and the file is refused as too large. Default 1,024 MB. */
  heapMegabytes?: number;
  /** The thread is terminated after this long and the file refused as too slow to read. Default 120,000 ms. */
  timeoutMs?: number;
  /**
   * Most bytes of binary buffers (typed arrays: where pdf.js inflates a PDF's streams, outside
   * the heap) the thread may allocate in all for one document. Default 256 MB.
   */
  maxBinaryBytes?: number;
  /** Terminates the thread when aborted (the activity was cancelled); the promise rejects with the reason. */
  signal?: AbortSignal;
}

/** What the thread is asked to read (structured-cloned in a message). */
export interface ExtractionRequest {
  /** A file to read, or else `bytes` named `name`. */
  path?: string;
  bytes?: Uint8Array;
  name: string;
  options: Omit<ExtractTextOptions, 'signal'>;
  maxBinaryBytes: number;
}

/** The one message the thread posts. */
export type ExtractionThreadReply =
  | { document: ExtractedDocument }
  | { extractionError: { problem: DocumentExtractionProblem; message: string } }
  | { otherError: { message: string; code?: string } };

/** Idle threads kept for the next document, so a normal one does not pay for starting a thread and loading the readers. */
const MAXIMUM_IDLE_THREADS = 2;

interface ExtractionThread {
  worker: Worker;
  heapMegabytes: number;
}

const idleThreads: ExtractionThread[] = [];

/** The thread's entry: the compiled JavaScript beside this file, or the TypeScript through tsx. */
function threadSource(): string {
  const entry = join(__dirname, `extraction-thread-main${extname(__filename) || '.js'}`);
  return `${extname(__filename) === '.ts' ? "require('tsx/cjs');\n" : ''}require(${JSON.stringify(entry)});\n`;
}

function takeThread(heapMegabytes: number): ExtractionThread {
  const index = idleThreads.findIndex((thread) => thread.heapMegabytes === heapMegabytes);
  if (index >= 0) {
    const [thread] = idleThreads.splice(index, 1) as [ExtractionThread];
    thread.worker.ref();
    return thread;
  }
  const worker = new Worker(threadSource(), {
    eval: true,
    resourceLimits: {
      maxOldGenerationSizeMb: heapMegabytes,
      maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.floor(heapMegabytes / 16))),
    },
  });
  // An idle thread that dies (it should not) is simply dropped.
  worker.on('exit', () => {
    const idle = idleThreads.findIndex((thread) => thread.worker === worker);
    if (idle >= 0) idleThreads.splice(idle, 1);
  });
  return { worker, heapMegabytes };
}

function returnThread(thread: ExtractionThread): void {
  if (idleThreads.length >= MAXIMUM_IDLE_THREADS) {
    void thread.worker.terminate();
    return;
  }
  thread.worker.unref(); // an idle thread never keeps the process alive
  idleThreads.push(thread);
}

/**
 * Extracts a document's text (as `extractText` / `extractTextFromBytes`) in a worker thread,
 * so that a hostile document — a ZIP or PDF bomb, a file that takes minutes to parse — can at
 * worst end that thread: its heap is capped (`heapMegabytes`), its binary allocations too
 * (`maxBinaryBytes`), it is terminated after `timeoutMs` and when `signal` aborts. The calling
 * thread stays free meanwhile (it only waits for one message). A thread that answered is kept
 * for the next document (two at most); one that failed in any other way is terminated.
 *
 * @param source A file path, or bytes with the name their extension and messages use.
 * @throws DocumentExtractionError as `extractText` does, and `too-large` when the thread runs
 *   out of memory or time; errors of the file system keep their `code`; `signal.reason` when aborted.
 */
export function extractTextInThread(
  source: { path: string } | { bytes: Uint8Array; name: string },
  options: IsolatedExtractionOptions = {},
): Promise<ExtractedDocument> {
  const {
    heapMegabytes = DEFAULT_EXTRACTION_HEAP_MEGABYTES,
    timeoutMs = DEFAULT_EXTRACTION_TIMEOUT_MS,
    maxBinaryBytes = DEFAULT_EXTRACTION_BINARY_BYTES,
    signal,
    ...extractOptions
  } = options;
  const name = 'path' in source ? source.path : source.name;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const request: ExtractionRequest = { ...source, name, options: extractOptions, maxBinaryBytes };
  return new Promise<ExtractedDocument>((resolve, reject) => {
    const thread = takeThread(heapMegabytes);
    const { worker } = thread;
    let settled = false;
    const onExit = (code: number) =>
      finish(() =>
        reject(new Error(`the document-extraction thread for ${name} exited (code ${code}) without an answer`)),
      );
    const onAbort = () => finish(() => reject(signal?.reason));
    const onMessage = (reply: ExtractionThreadReply) =>
      finish(() => {
        if ('document' in reply) resolve(reply.document);
        else if ('extractionError' in reply)
          reject(new DocumentExtractionError(reply.extractionError.problem, reply.extractionError.message));
        else
          reject(
            Object.assign(
              new Error(reply.otherError.message),
              reply.otherError.code ? { code: reply.otherError.code } : {},
            ),
          );
      }, true);
    const onError = (error: NodeJS.ErrnoException) =>
      finish(() => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
          reject(
            new DocumentExtractionError(
              'too-large',
              `${name} is too large to read: reading it needs more than ${heapMegabytes} MB of memory.`,
            ),
          );
        else reject(error);
      });
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new DocumentExtractionError(
              'too-large',
              `${name} took longer than ${Math.round(timeoutMs / 1000)} s to read, the limit for one document.`,
            ),
          ),
        ),
      timeoutMs,
    );
    function finish(outcome: () => void, reusable = false): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      worker.off('exit', onExit).off('message', onMessage).off('error', onError);
      if (reusable) returnThread(thread);
      else void worker.terminate();
      outcome();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('exit', onExit).on('message', onMessage).on('error', onError);
    worker.postMessage(request);
  });
}
