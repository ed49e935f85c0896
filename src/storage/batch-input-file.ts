import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { isReference, type TranscriptStore } from './transcript-store';
import {
  BATCH_INPUT_FORMATS,
  batchInputFormatOf,
  parseBatchInput,
  type BatchItem,
  type ParsedBatchInput,
} from '../domain/batch-input';

/**
 * Node-only side of a batch's input: reading the file, and keeping it in the transcript store
 * by content hash, so what a batch or a schedule runs never changes when the file is edited or
 * deleted later, and the batch's history carries the reference, not the questions.
 */

/** The input file cannot be used: unknown extension, unreadable. The CLI exits 2 with this message. */
export class BatchInputFileError extends Error {
  override readonly name = 'BatchInputFileError';
}

export interface BatchInputFile extends ParsedBatchInput {
  path: string;
  format: NonNullable<ReturnType<typeof batchInputFormatOf>>;
  /** sha256 of the file's bytes, for batch.json. */
  fileHash: string;
}

/** Reads and checks an input file; problems are returned, not thrown (the caller reports them all). */
export async function readBatchInputFile(path: string): Promise<BatchInputFile> {
  const format = batchInputFormatOf(path);
  if (!format) {
    throw new BatchInputFileError(
      `${path}: unknown input format "${/\.[^./]*$/.exec(basename(path))?.[0] ?? '(no extension)'}"; use ${BATCH_INPUT_FORMATS.map((name) => `.${name}`).join(', ')}`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : (error as Error).message;
    throw new BatchInputFileError(`${path}: cannot read the input file (${why})`);
  }
  const parsed = parseBatchInput(bytes.toString('utf8'), format);
  return { ...parsed, path, format, fileHash: `sha256:${createHash('sha256').update(bytes).digest('hex')}` };
}

/** The stored form of a batch's questions. */
interface StoredBatchInput {
  kind: 'batch-input';
  items: BatchItem[];
}

/** Stores the questions (content-addressed); resolves to their reference once durable. */
export async function storeBatchInput(store: TranscriptStore, items: readonly BatchItem[]): Promise<string> {
  const stored: StoredBatchInput = {
    kind: 'batch-input',
    items: items.map((item) =>
      item.answer === undefined ? { question: item.question } : { question: item.question, answer: item.answer },
    ),
  };
  return store.putText(JSON.stringify(stored));
}

/** The questions behind a reference; rejects when it is no stored batch input. */
export async function loadBatchInput(store: TranscriptStore, reference: string): Promise<BatchItem[]> {
  if (!isReference(reference))
    throw new TypeError(`Not a batch input reference: ${JSON.stringify(reference).slice(0, 100)}`);
  const stored = JSON.parse(await store.getText(reference)) as StoredBatchInput;
  if (stored?.kind !== 'batch-input' || !Array.isArray(stored.items))
    throw new TypeError(`Stored blob ${reference} is not a batch input`);
  return stored.items;
}
