/**
 * When a watcher of a run's live text (issue 32) describes the run, to find model calls it is
 * not pushed: the one decision of `watchRunText` (`src/client/live-text.ts`) that costs Temporal
 * requests. Pure: the caller gives the clock.
 *
 * A watcher that reads a run stream from a worker (`GET <base>/runs/<token>`) is pushed every call
 * of the run that lands on that worker, so it describes the run only to find calls that land
 * elsewhere (another worker, a retry elsewhere, a worker that died): after the last call it was
 * shown ended, first once `runStreamQuietMs` have gone by without a new one, then backing off
 * to every `maxQuietMs`. Before it has a run stream, the same backoff from `pollMs`. While a
 * call is open and pushed, only a check every `pushedCheckMs` (a worker that hangs without
 * closing its connection: the call's retry lands elsewhere).
 */

/** What the watcher knows now, for {@link nextRunDescribeAt}. */
export interface RunDescribeState {
  /** Calls whose text is pushed by a worker now (a run stream or a call's own stream), not ended. */
  pushed: number;
  /** Calls seen pending whose text has no source yet (no URL in their details, no text). */
  waiting: number;
  /** Calls read from their heartbeat details (the fallback). */
  heartbeat: number;
  /** Run streams connected now. */
  runStreams: number;
  /** When the last describe was asked (ms), undefined before the first. */
  lastDescribeAt: number | undefined;
  /** When the watcher last had no call open (ms): the start of watching, or the end of the last call. */
  quietSince: number;
  /** Describes since `quietSince`. */
  quietDescribes: number;
}

/** The cadences of {@link nextRunDescribeAt}, in ms; each has a default. */
export interface RunDescribeCadence {
  /** While a call's text has no source yet, and the first step of the backoff without a run stream. Default 250. */
  pollMs?: number;
  /** While a call is read from its heartbeat details. Default 1,000. */
  fallbackPollMs?: number;
  /** While every open call is pushed: a check that its worker is still there. Default 10,000. */
  pushedCheckMs?: number;
  /** The first step of the backoff with a run stream connected: the next call has this long to open there. Default 1,000. */
  runStreamQuietMs?: number;
  /** The backoff's cap. Default 2,000. */
  maxQuietMs?: number;
}

export const DEFAULT_RUN_DESCRIBE_CADENCE: Required<RunDescribeCadence> = {
  pollMs: 250,
  fallbackPollMs: 1_000,
  pushedCheckMs: 10_000,
  runStreamQuietMs: 1_000,
  maxQuietMs: 2_000,
};

/**
 * When to describe the run next (ms, on the caller's clock; at or before `now` means at once).
 * Calls without a source come first (`pollMs`), then calls read from heartbeats
 * (`fallbackPollMs`), then pushed calls (`pushedCheckMs` after the last describe); with no call
 * open, the backoff: `runStreamQuietMs` (with a run stream) or `pollMs` (without) after
 * `quietSince`, doubling with each describe that finds nothing, up to `maxQuietMs`.
 */
export function nextRunDescribeAt(state: RunDescribeState, cadence: RunDescribeCadence = {}): number {
  const { pollMs, fallbackPollMs, pushedCheckMs, runStreamQuietMs, maxQuietMs } = {
    ...DEFAULT_RUN_DESCRIBE_CADENCE,
    ...cadence,
  };
  const last = state.lastDescribeAt;
  if (last === undefined) return state.quietSince;
  if (state.waiting > 0) return last + pollMs;
  if (state.heartbeat > 0) return last + fallbackPollMs;
  if (state.pushed > 0) return last + pushedCheckMs;
  const first = state.runStreams > 0 ? runStreamQuietMs : pollMs;
  if (state.quietDescribes === 0) return state.quietSince + Math.min(first, maxQuietMs);
  return last + Math.min(maxQuietMs, first * 2 ** Math.min(state.quietDescribes, 20));
}
