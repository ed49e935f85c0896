import { LIVE_TEXT_PIECE_CHARACTERS, liveTextPieces, type LiveTextKind } from './live-text';

/**
 * Live text batching (issue 32): how a worker groups the pieces a model streams before writing
 * them to watchers. A model streams a few characters at a time, tens of pieces a second per call;
 * writing each to each watcher costs a JSON line, a chunk of HTTP framing and a socket write on the
 * worker's main thread, and a read and a parse in every watcher. Pieces that come within one
 * interval go out in one write, adjacent pieces of one kind as one line. The first piece after a
 * quiet interval goes out at once, so a lone piece is not delayed; a steady stream waits at most
 * the interval. Pure: the clock is passed in.
 */

/** Default interval (ms) within which streamed pieces are written to watchers together. */
export const DEFAULT_LIVE_TEXT_FLUSH_MS = 100;

/** A piece of text as the model streamed it, before it is written. */
export interface LiveTextPart {
  kind: LiveTextKind;
  text: string;
}

/**
 * How long to hold text that just came before writing it, in ms: 0 (now) when nothing was
 * written within the last `intervalMs` (or ever), or when what is held fills a line
 * (`heldCharacters` ≥ {@link LIVE_TEXT_PIECE_CHARACTERS}, so a burst is never held whole), else what
 * is left of the interval since the last write. `intervalMs` 0 writes every piece as it comes.
 */
export function liveTextFlushDelay(
  lastWriteAt: number | undefined,
  now: number,
  intervalMs: number,
  heldCharacters = 0,
): number {
  if (lastWriteAt === undefined || intervalMs <= 0 || heldCharacters >= LIVE_TEXT_PIECE_CHARACTERS) return 0;
  const since = now - lastWriteAt;
  // A clock that went back counts as a quiet interval, never as a longer wait.
  if (since < 0 || since >= intervalMs) return 0;
  return intervalMs - since;
}

/**
 * The lines to write for the pieces held since the last write: adjacent pieces of one kind joined
 * (their text in order), each line at most `limit` characters (longer text split, never inside a
 * surrogate pair). Empty pieces are dropped.
 */
export function coalesceLiveText(parts: readonly LiveTextPart[], limit?: number): LiveTextPart[] {
  const joined: LiveTextPart[] = [];
  for (const part of parts) {
    if (!part.text) continue;
    const last = joined[joined.length - 1];
    if (last && last.kind === part.kind) last.text += part.text;
    else joined.push({ kind: part.kind, text: part.text });
  }
  return joined.flatMap((part) => liveTextPieces(part.text, limit).map((text) => ({ kind: part.kind, text })));
}
