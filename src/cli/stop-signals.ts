/**
 * Signals that ask the CLI to stop: Ctrl-C in a terminal (SIGINT, sent to the whole foreground
 * process group), `kill` (SIGTERM), a closed terminal (SIGHUP).
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Signals closer together than this count as one request: a terminal and a wrapper that forwards
 * signals (an `npm exec` that passes SIGINT on) may both deliver the same Ctrl-C.
 */
export const SAME_REQUEST_WITHIN_MS = 300;

/** What `run` does when asked to stop. */
export type StopResponse =
  /** Nothing started yet: stop what is starting and exit. */
  | 'abort-start'
  /** Cancel the run and wait until it has ended cancelled, then stop what was started. */
  | 'cancel-run'
  /** Stop waiting for the cancellation; stop what was started now. */
  | 'force-stop'
  /** Exit at once (what was started is killed on exit). */
  | 'exit-now';

/** Where `run` is: starting the stack, following its run, or stopping after the run ended. */
export type RunPhase = 'starting' | 'running' | 'stopping';

/**
 * `run`'s answer to the `requests`-th stop request (1 for the first) in `phase`. While the run
 * goes on, the first request cancels it and the second stops waiting; before the run has
 * started, the first stops the start-up; once the run has ended, there is nothing left to wait
 * for, so any request exits at once. A third request always exits at once.
 */
export function stopResponse(requests: number, phase: RunPhase): StopResponse {
  if (requests >= 3 || phase === 'stopping') return 'exit-now';
  if (phase === 'starting') return requests === 1 ? 'abort-start' : 'exit-now';
  return requests === 1 ? 'cancel-run' : 'force-stop';
}

/**
 * Listens for {@link STOP_SIGNALS} while installed (so none of them kills the process) and
 * reports each stop request, numbered; signals within {@link SAME_REQUEST_WITHIN_MS} of the
 * previous one are the same request.
 */
export class StopRequests {
  private requests = 0;
  private lastAt = Number.NEGATIVE_INFINITY;
  private readonly handler = (signal: NodeJS.Signals) => this.receive(signal);

  constructor(
    private readonly onRequest: (requests: number, signal: NodeJS.Signals) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many stop requests arrived so far. */
  get count(): number {
    return this.requests;
  }

  install(): this {
    for (const signal of STOP_SIGNALS) process.on(signal, this.handler);
    return this;
  }

  dispose(): void {
    for (const signal of STOP_SIGNALS) process.off(signal, this.handler);
  }

  /** Counts one signal (public for tests). */
  receive(signal: NodeJS.Signals): void {
    const at = this.now();
    const sameRequest = at - this.lastAt < SAME_REQUEST_WITHIN_MS;
    this.lastAt = at;
    if (sameRequest) return;
    this.requests += 1;
    this.onRequest(this.requests, signal);
  }
}
