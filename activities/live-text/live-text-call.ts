import type { ServerResponse } from 'node:http';
import { encodeLiveTextLine, type LiveTextKind, type LiveTextLine } from '../../src/domain/live-text';
import { coalesceLiveText, liveTextFlushDelay, type LiveTextPart } from '../../src/domain/live-text-batching';

/** Limits of one call's live text. */
export interface LiveTextCallLimits {
  /** Characters of text the call keeps for watchers that join late or fall behind; older text is dropped (a gap line says how much). */
  bufferCharacters: number;
  /** Watchers of this call at once; more are refused (503). */
  maxWatchers: number;
  /** How long a watcher that fell behind gets, after the call ended, to take the rest; default 10,000 ms. */
  endGraceMs?: number;
  /**
   * Pieces streamed within this many ms are written to watchers together, one line per run of a
   * kind (`src/domain/live-text-batching.ts`); the first piece after a quiet interval at once.
   * Default 0: every piece as it comes.
   */
  flushMs?: number;
}

interface Piece {
  /** Characters of the call's text before this piece. */
  offset: number;
  line: string;
  characters: number;
}

/**
 * Where a watcher's lines go: its own response (a call's URL), or its share of a run stream's
 * response (`live-text-run.ts`), whose lines carry `tag` in front of each line's fields.
 */
export interface LiveTextOutlet {
  /** Put in place of each line's `{` (a run stream's activity id and attempt); '' for none. */
  readonly tag: string;
  /** Closed or destroyed: nothing more is written. */
  readonly closed: boolean;
  /** Writes; false when the socket should drain before more is written. */
  write(text: string): boolean;
  /** The call ended: its last lines (a call's response ends with them; a run stream goes on). */
  finish(text: string): void;
  /** Calls `onDrain` when the socket drained, `onClose` when it closed; returns what stops both. */
  listen(onDrain: () => void, onClose: () => void): () => void;
  /** Cuts the watcher off (it did not take the call's rest in time). */
  cut(): void;
}

/** A watcher's own response as an outlet (a call's URL). */
export function responseOutlet(response: ServerResponse): LiveTextOutlet {
  return {
    tag: '',
    get closed() {
      return response.destroyed || response.writableEnded;
    },
    write: (text) => response.write(text),
    finish: (text) => response.end(text),
    listen(onDrain, onClose) {
      response.on('drain', onDrain);
      response.on('close', onClose);
      return () => {
        response.off('drain', onDrain);
        response.off('close', onClose);
      };
    },
    cut: () => response.destroy(),
  };
}

interface Watcher {
  outlet: LiveTextOutlet;
  /** Stops listening to the outlet. */
  stop: () => void;
  /** Characters of the call's text this watcher was sent (or told it skipped). */
  position: number;
  /** Waiting for the socket to drain before writing more. */
  waiting: boolean;
  /** Counted against the call's limit (its own URL's watchers). */
  counted: boolean;
}

/**
 * One model-call attempt's live text on this worker: the text so far (its newer part, bounded),
 * the watchers reading it, each sent the backlog when it joins and every piece after, and told
 * how much it missed when it fell further behind than the buffer holds. A slow watcher never
 * slows the call: it is written to only when its socket drains.
 */
export class LiveTextCall {
  private pieces: Piece[] = [];
  private bufferedCharacters = 0;
  private characters = 0;
  private readonly watchers = new Set<Watcher>();
  private countedWatchers = 0;
  private ended: 'completed' | 'failed' | undefined;
  /** Text streamed since the last write to watchers. */
  private held: LiveTextPart[] = [];
  private heldCharacters = 0;
  private lastWriteAt: number | undefined;
  private writeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** The run's model call number. */
    readonly call: number,
    private readonly limits: LiveTextCallLimits,
  ) {}

  /** Watchers of the call's own URL now. */
  get watcherCount(): number {
    return this.countedWatchers;
  }

  /**
   * Adds text the model streamed and sends it to every watcher that keeps up: at once after a
   * quiet interval, else with whatever else streams until the interval (`flushMs`) is over.
   */
  add(kind: LiveTextKind, text: string): void {
    if (this.ended || !text) return;
    this.held.push({ kind, text });
    this.heldCharacters += text.length;
    const delay = liveTextFlushDelay(
      this.lastWriteAt,
      performance.now(),
      this.limits.flushMs ?? 0,
      this.heldCharacters,
    );
    if (delay === 0) this.publish();
    else if (!this.writeTimer) {
      this.writeTimer = setTimeout(() => this.publish(), delay);
      this.writeTimer.unref();
    }
  }

  /** The text held since the last write becomes pieces, and goes to every watcher that keeps up. */
  private publish(): void {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    if (!this.held.length) return;
    this.lastWriteAt = performance.now();
    for (const part of coalesceLiveText(this.held)) {
      const line = encodeLiveTextLine({ call: this.call, kind: part.kind, text: part.text });
      this.pieces.push({ offset: this.characters, line, characters: part.text.length });
      this.characters += part.text.length;
      this.bufferedCharacters += part.text.length;
    }
    this.held = [];
    this.heldCharacters = 0;
    while (this.bufferedCharacters > this.limits.bufferCharacters && this.pieces.length > 1) {
      const dropped = this.pieces.shift() as Piece;
      this.bufferedCharacters -= dropped.characters;
    }
    for (const watcher of this.watchers) this.flush(watcher);
  }

  /**
   * Takes a watcher: false when the call has as many as it may. A run stream's share (`counted`
   * false) is bounded by the run's own limit, not the call's.
   */
  watch(outlet: LiveTextOutlet, counted = true): boolean {
    if (counted && this.countedWatchers >= this.limits.maxWatchers) return false;
    const watcher: Watcher = { outlet, stop: () => undefined, position: 0, waiting: false, counted };
    this.watchers.add(watcher);
    if (counted) this.countedWatchers += 1;
    watcher.stop = outlet.listen(
      () => {
        watcher.waiting = false;
        this.flush(watcher);
      },
      () => this.drop(watcher),
    );
    this.flush(watcher);
    return true;
  }

  private drop(watcher: Watcher): void {
    if (!this.watchers.delete(watcher)) return;
    watcher.stop();
    if (watcher.counted) this.countedWatchers -= 1;
  }

  /** The attempt ended: each watcher gets what it has not yet (as far as it takes it) and the end line. */
  end(outcome: 'completed' | 'failed'): void {
    if (this.ended) return;
    this.publish();
    this.ended = outcome;
    for (const watcher of this.watchers) this.flush(watcher);
    // A watcher that does not take the rest within the grace is cut off: the call holds nothing for it longer.
    if (this.watchers.size)
      setTimeout(() => {
        for (const watcher of [...this.watchers]) {
          this.drop(watcher);
          watcher.outlet.cut();
        }
        this.pieces = [];
      }, this.limits.endGraceMs ?? 10_000).unref();
    else this.pieces = [];
  }

  private flush(watcher: Watcher): void {
    const { outlet } = watcher;
    if (watcher.waiting || outlet.closed) return;
    const lines: string[] = [];
    // A run stream's lines carry the attempt: its tag in place of each line's `{`.
    const tagged = (line: string) => (outlet.tag ? outlet.tag + line.slice(1) : line);
    const first = this.pieces[0];
    if (first && watcher.position < first.offset) {
      lines.push(tagged(encodeLiveTextLine({ skipped: first.offset - watcher.position })));
      watcher.position = first.offset;
    }
    // From the end back to the first piece this watcher lacks: a watcher that keeps up costs only the new pieces.
    let next = this.pieces.length;
    while (next > 0 && (this.pieces[next - 1] as Piece).offset >= watcher.position) next -= 1;
    for (const piece of this.pieces.slice(next)) {
      lines.push(tagged(piece.line));
      watcher.position = piece.offset + piece.characters;
    }
    if (this.ended) {
      const end: LiveTextLine = { end: this.ended };
      this.drop(watcher);
      outlet.finish(lines.join('') + tagged(encodeLiveTextLine(end)));
      return;
    }
    if (lines.length && !outlet.write(lines.join(''))) watcher.waiting = true;
  }
}
