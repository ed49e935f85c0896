import type { TranscriptStore } from './transcript-store';

/** Settings of a {@link CachedTranscriptStore}. */
export interface TranscriptCacheOptions {
  /**
   * Characters of text kept in memory at most (a JavaScript string's length; about 2 bytes each
   * in V8's worst case). The least recently used texts go first. Must be positive.
   */
  maxCharacters: number;
}

/**
 * A read cache in front of a transcript store. Blobs are immutable and content-addressed, so a
 * text read or written once under a reference is that reference's text for ever: nothing is
 * invalidated, and the store behind (and its hash check) is asked only on a miss. Every model
 * call loads its whole conversation, so without a cache a run of n calls makes about n²/2 reads;
 * with one, it reads each message once per worker (see README, "Many machines: figures").
 *
 * A text longer than the whole cache is passed through and not kept. Concurrent misses of one
 * reference share one read. A failed read is not cached, so an outage of the store behind is
 * retried as before.
 */
export class CachedTranscriptStore implements TranscriptStore {
  private readonly texts = new Map<string, string>();
  private readonly reading = new Map<string, Promise<string>>();
  private characters = 0;

  constructor(
    private readonly store: TranscriptStore,
    private readonly options: TranscriptCacheOptions,
  ) {
    if (!(options.maxCharacters > 0))
      throw new RangeError(`CachedTranscriptStore: maxCharacters must be positive, got ${options.maxCharacters}`);
  }

  /** Texts and characters held now (for tests and the worker's log). */
  get size(): { texts: number; characters: number } {
    return { texts: this.texts.size, characters: this.characters };
  }

  async putText(text: string): Promise<string> {
    const reference = await this.store.putText(text);
    this.remember(reference, text);
    return reference;
  }

  async getText(reference: string): Promise<string> {
    const cached = this.texts.get(reference);
    if (cached !== undefined) {
      // Map keeps insertion order: moving the entry to the end makes the first one the least recently used.
      this.texts.delete(reference);
      this.texts.set(reference, cached);
      return cached;
    }
    const inFlight = this.reading.get(reference);
    if (inFlight !== undefined) return inFlight;
    const read = this.store.getText(reference).then((text) => {
      this.remember(reference, text);
      return text;
    });
    this.reading.set(reference, read);
    try {
      return await read;
    } finally {
      this.reading.delete(reference);
    }
  }

  private remember(reference: string, text: string): void {
    if (text.length > this.options.maxCharacters || this.texts.has(reference)) return;
    this.texts.set(reference, text);
    this.characters += text.length;
    for (const [oldest, oldestText] of this.texts) {
      if (this.characters <= this.options.maxCharacters) break;
      this.texts.delete(oldest);
      this.characters -= oldestText.length;
    }
  }
}
