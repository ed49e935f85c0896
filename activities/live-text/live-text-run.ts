import type { ServerResponse } from 'node:http';
import { encodeRunTextOpened, runTextPrefix } from '../../src/domain/live-text';
import type { LiveTextCall, LiveTextOutlet } from './live-text-call';

/** One model-call attempt of a run, as its run stream shows it. */
export interface RunCall {
  live: LiveTextCall;
  activityId: string;
  attempt: number;
  /** The run's model call number. */
  call: number;
}

/**
 * One watcher's stream of a run (`GET /runs/<token>`): one response that every attempt of the
 * run on this worker writes into, each line tagged with its attempt. It tells each attempt's
 * writer when the socket drained (one listener on the response, whatever the number of
 * attempts over the stream's life) and when it closed.
 */
class RunWatcher {
  private readonly drained = new Set<() => void>();
  private readonly closedListeners = new Set<() => void>();

  constructor(readonly response: ServerResponse) {
    response.on('drain', () => {
      for (const listener of [...this.drained]) listener();
    });
    response.on('close', () => {
      for (const listener of [...this.closedListeners]) listener();
    });
  }

  /** An attempt opens on this stream: its `opened` line, then (from the call) its backlog and every piece. */
  attach(call: RunCall): void {
    if (this.closed) return;
    this.response.write(encodeRunTextOpened(call.activityId, call.attempt, call.call));
    call.live.watch(this.outlet(runTextPrefix(call.activityId, call.attempt)), false);
  }

  /** Ends the stream (the run has had no call here for a while). */
  end(): void {
    if (!this.closed) this.response.end();
  }

  private get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  private outlet(tag: string): LiveTextOutlet {
    const response = this.response;
    return {
      tag,
      get closed() {
        return response.destroyed || response.writableEnded;
      },
      write: (text) => response.write(text),
      // The attempt's end line; the stream goes on for the run's next attempts.
      finish: (text) => void response.write(text),
      listen: (onDrain, onClose) => {
        this.drained.add(onDrain);
        this.closedListeners.add(onClose);
        return () => {
          this.drained.delete(onDrain);
          this.closedListeners.delete(onClose);
        };
      },
      // A run stream that did not take an ended attempt's rest in time is cut off as a whole.
      cut: () => response.destroy(),
    };
  }
}

/**
 * A run's live text on this worker: its attempts open here now, and the watchers of its run
 * stream, each shown every attempt open when it joins (with its backlog) and every one that
 * opens later. Bounded by its owner (`LiveTextServer`: watchers per run and per worker; a run
 * with no attempt for a while is forgotten and its streams ended).
 */
export class LiveTextRun {
  private readonly calls = new Set<RunCall>();
  private readonly watchers = new Set<RunWatcher>();

  /** Watchers of the run's stream now. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Attempts open now. */
  get openCalls(): number {
    return this.calls.size;
  }

  /** An attempt of the run opened on this worker: every watcher is shown it. */
  add(call: RunCall): void {
    this.calls.add(call);
    for (const watcher of this.watchers) watcher.attach(call);
  }

  /** The attempt is about to end (its own `end` tells its watchers). */
  remove(call: RunCall): void {
    this.calls.delete(call);
  }

  /** A new watcher of the run's stream, until its connection closes. */
  watch(response: ServerResponse): void {
    const watcher = new RunWatcher(response);
    this.watchers.add(watcher);
    response.on('close', () => this.watchers.delete(watcher));
    for (const call of this.calls) watcher.attach(call);
  }

  /** Ends every watcher's stream. */
  end(): void {
    for (const watcher of this.watchers) watcher.end();
  }
}
