import {
  TranscriptMissingError,
  isReference,
  referenceOf,
  type ListableTranscriptStore,
  type StoredBlob,
} from '../../src/storage/transcript-store';

/**
 * An in-memory `TranscriptStore` for unit tests: the same `sha256:<hex>` content addresses as
 * `LocalDirectoryTranscriptStore`, the same errors, no filesystem. It counts writes and reads
 * so tests can check what an activity stored.
 */
export class MemoryTranscriptStore implements ListableTranscriptStore {
  readonly blobs = new Map<string, string>();
  /** Every `putText` call's text, in order (including repeats of stored texts). */
  readonly puts: string[] = [];
  /** Every `getText` call's reference, in order. */
  readonly gets: string[] = [];
  /** When each blob was last put; tests may set an older time to age a blob. */
  readonly writtenAt = new Map<string, Date>();

  static referenceOf(text: string): string {
    return referenceOf(text);
  }

  async putText(text: string): Promise<string> {
    if (typeof text !== 'string') throw new TypeError(`putText expects a string, got ${typeof text}`);
    this.puts.push(text);
    const reference = MemoryTranscriptStore.referenceOf(text);
    if (!this.blobs.has(reference)) this.blobs.set(reference, text);
    this.writtenAt.set(reference, new Date());
    return reference;
  }

  async getText(reference: string): Promise<string> {
    this.gets.push(reference);
    if (!isReference(reference))
      throw new TypeError(`Not a transcript reference: ${JSON.stringify(reference).slice(0, 100)}`);
    const text = this.blobs.get(reference);
    if (text === undefined) throw new TranscriptMissingError(reference, 'the in-memory test store');
    return text;
  }

  async *listBlobs(): AsyncIterable<StoredBlob> {
    for (const [reference, text] of this.blobs) {
      yield {
        reference,
        sizeBytes: Buffer.byteLength(text, 'utf8'),
        lastModified: this.writtenAt.get(reference) ?? new Date(0),
      };
    }
  }

  async deleteBlob(reference: string): Promise<void> {
    this.blobs.delete(reference);
    this.writtenAt.delete(reference);
  }
}
