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

export class TranscriptMissingError extends Error {
  override readonly name = 'TranscriptMissingError';
  constructor(readonly reference: string, where: string) {
    super(`Transcript blob ${reference} is not in ${where}. Every worker and the CLI must use the same transcript store (REACT_AGENT_TRANSCRIPT_DIR).`);
  }
}

export const REFERENCE_PREFIX = 'sha256:';

export function isReference(value: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(value);
}
