import { createHash } from 'node:crypto';

/**
 * Where a run's messages and tool outputs live, outside workflow history. Blobs are
 * immutable and content-addressed (`sha256:<hex>`), so writing the same text twice (a retried
 * activity) is harmless and a reference in history always names exactly one content.
 *
 * The embedded default is a local directory (`LocalDirectoryTranscriptStore`); workers that
 * span machines implement this interface over a shared object store (S3, MinIO, GCS).
 */
export interface TranscriptStore {
  /** Stores a text and resolves to its reference once the bytes are durable. */
  putText(text: string): Promise<string>;
  /** The text behind a reference; rejects with `TranscriptMissingError` if there is none. */
  getText(reference: string): Promise<string>;
}

/** One stored blob, as a listing sees it. */
export interface StoredBlob {
  reference: string;
  /** Size of the stored bytes. */
  sizeBytes: number;
  /** When the blob was last written (for the local directory: also when a put found it already there). */
  lastModified: Date;
}

/**
 * A transcript store that can also list and delete its blobs: what retention (`react-agent gc`)
 * needs. Runs never delete; only gc does, and only blobs no open or recent run references.
 */
export interface ListableTranscriptStore extends TranscriptStore {
  /** Every blob in the store, in no particular order; objects that are not blobs (other keys or files) are skipped. */
  listBlobs(): AsyncIterable<StoredBlob>;
  /** Removes a blob; removing one that is not there is not an error. */
  deleteBlob(reference: string): Promise<void>;
}

export class TranscriptMissingError extends Error {
  override readonly name = 'TranscriptMissingError';
  constructor(
    readonly reference: string,
    where: string,
    setting = 'REACT_AGENT_TRANSCRIPT_DIR',
  ) {
    super(
      `Transcript blob ${reference} is not in ${where}. Every worker and the CLI must use the same transcript store (${setting}).`,
    );
  }
}

/** A blob came back whose SHA-256 is not its reference: the stored object was changed or damaged. Retrying cannot fix it. */
export class TranscriptCorruptError extends Error {
  override readonly name = 'TranscriptCorruptError';
  constructor(
    readonly reference: string,
    where: string,
    actual: string,
  ) {
    super(
      `Transcript blob ${reference} in ${where} is corrupt: its content hashes to ${actual}. The object was changed or damaged in the store.`,
    );
  }
}

/**
 * The store could not be reached or did not answer (connection refused, timeout, 5xx, throttling),
 * or refused this worker's credentials. Worth retrying: the run resumes once the store is back or
 * the worker's settings are fixed.
 */
export class TranscriptStoreUnavailableError extends Error {
  override readonly name = 'TranscriptStoreUnavailableError';
  constructor(
    message: string,
    override readonly cause?: unknown,
    /** The setting to fix when the cause is configuration (credentials, bucket), e.g. `AWS_ACCESS_KEY_ID`. */
    readonly variable?: string,
  ) {
    super(message);
  }
}

export const REFERENCE_PREFIX = 'sha256:';

/** The reference of a text (or of its UTF-8 bytes): `sha256:` and the hex SHA-256 of the bytes. Every store names a blob so. */
export function referenceOf(content: string | Uint8Array): string {
  return REFERENCE_PREFIX + createHash('sha256').update(content).digest('hex');
}

export function isReference(value: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(value);
}
