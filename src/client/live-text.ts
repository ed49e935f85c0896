import { defaultPayloadConverter } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  LiveTextLineReader,
  liveTextPointerOfDetails,
  modelCallOfDetails,
  type LiveTextChunk,
  type LiveTextKind,
} from '../domain/live-text';
import { streamIncrement, streamTailOfDetails } from '../domain/model-stream-text';
import { runHistory, type HistoryReader } from './run-history';

/*
 * Reading a run's live text (issue 32), the one way `react-agent follow` and your own code do it:
 * describe the run, find its streaming model call's heartbeat details, connect to the URL they
 * carry (the worker pushes each piece as the model streams it), and fall back to the details'
 * bounded tail (sent by the worker at most every 5 s) when that URL cannot be reached.
 */

/** One pending activity as `DescribeWorkflowExecution` reports it. */
type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** What a {@link LiveTextWatcher} tells its reader. */
export type LiveTextNotice =
  | { type: 'text'; activityId: string; attempt: number; call: number; kind: LiveTextKind | 'tail'; text: string }
  /** Characters of this attempt that went by unseen (a late start, a reader that fell behind). */
  | { type: 'skipped'; activityId: string; attempt: number; call: number; characters: number }
  /** A new attempt of the call (a retry): its text starts again from the beginning. */
  | { type: 'attempt'; activityId: string; attempt: number; call: number }
  /** A direct read of an attempt finished (its end, or a fall back to the heartbeat tail). */
  | { type: 'closed'; activityId: string; attempt: number }
  /** Where the text now comes from, said when it changes: `detail` is the worker's address, or why the fallback. */
  | { type: 'source'; source: 'direct' | 'heartbeat'; detail: string };

/** Settings of a {@link LiveTextWatcher}; all have defaults. */
export interface LiveTextWatcherOptions {
  /** Connect to the worker's live text URL when the details carry one. Default true; false reads the heartbeat tail only. */
  direct?: boolean;
  /** Longest wait for the worker's answer to a connection, in ms, before falling back. Default 3,000. */
  connectTimeoutMs?: number;
  /** Longest line of the stream, in bytes (`LIVE_TEXT_MAX_LINE_BYTES`). */
  maxLineBytes?: number;
  /** The fetch to connect with; default the global one. */
  fetch?: typeof fetch;
}

interface TrackedCall {
  activityId: string;
  attempt: number;
  call: number;
  /** Characters of the attempt's text told (or told skipped). */
  told: number;
  state: 'waiting' | 'direct' | 'heartbeat' | 'ended';
  stop: AbortController;
  /** Not pending at the last look. */
  missed?: boolean;
}

const MODEL_CALL_ACTIVITY = 'callModel';

function detailsOf(activity: PendingActivity): unknown {
  const first = activity.heartbeatDetails?.payloads?.[0];
  if (!first) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(first);
  } catch {
    return undefined;
  }
}

/**
 * The live text of one run's model calls, fed with the run's pending activities each time the
 * run is described ({@link observe}); it tells what it reads through `notify`. A call whose
 * details carry a live text URL is read from the worker directly (pieces as the model streams
 * them); otherwise, or when that fails, from the details' tail. Bounded: one connection per
 * streaming call, lines of at most `maxLineBytes`, a connection that does not answer in
 * `connectTimeoutMs` given up.
 */
export class LiveTextWatcher {
  private readonly calls = new Map<string, TrackedCall>();
  private lastSource = '';
  private readonly fetch: typeof fetch;

  constructor(
    private readonly notify: (notice: LiveTextNotice) => void,
    private readonly options: LiveTextWatcherOptions = {},
  ) {
    this.fetch = options.fetch ?? fetch;
  }

  /**
   * How long until the run is worth describing again: soon while a call's URL or first text is
   * awaited (`waitingMs`), every `fallbackMs` while a call is read from heartbeats, rarely while
   * every call streams directly (`directMs`, a check that the worker is still there).
   */
  describeDelay(waitingMs: number, fallbackMs: number, directMs = 10_000): number {
    const states = [...this.calls.values()].map((call) => call.state);
    if (states.includes('heartbeat')) return fallbackMs;
    if (states.includes('direct') && !states.includes('waiting')) return directMs;
    return waitingMs;
  }

  /** Whether a call is being read from the worker directly now. */
  get streaming(): boolean {
    return [...this.calls.values()].some((call) => call.state === 'direct');
  }

  /** Reads the run's pending activities (from a describe): new calls, new attempts, new tails. */
  observe(pending: PendingActivity[]): void {
    const seen = new Set<string>();
    for (const activity of pending) {
      if (activity.activityType?.name !== MODEL_CALL_ACTIVITY) continue;
      const activityId = activity.activityId ?? '';
      seen.add(activityId);
      const details = detailsOf(activity);
      const attempt = Number(activity.attempt ?? 1);
      let tracked = this.calls.get(activityId);
      const call = modelCallOfDetails(details) ?? tracked?.call ?? 0;
      if (tracked && tracked.attempt !== attempt) {
        tracked.stop.abort();
        this.notify({ type: 'attempt', activityId, attempt, call });
        tracked = undefined;
      }
      if (!tracked) {
        tracked = { activityId, attempt, call, told: 0, state: 'waiting', stop: new AbortController() };
        this.calls.set(activityId, tracked);
      }
      tracked.call = call;
      if (tracked.state === 'waiting') {
        const pointer = this.options.direct === false ? undefined : liveTextPointerOfDetails(details);
        if (pointer) {
          tracked.state = 'direct';
          void this.readDirect(tracked, pointer.url).finally(() =>
            this.notify({ type: 'closed', activityId, attempt }),
          );
          continue;
        }
        if (!streamTailOfDetails(details)) continue;
        this.fallBack(tracked, this.options.direct === false ? 'direct channel not used' : 'the worker serves none');
      }
      if (tracked.state === 'heartbeat') this.readTail(tracked, details);
    }
    // Calls no longer pending ended; one streaming directly gets its end line from the worker, and
    // is forgotten only when it is still open at the next look (a worker that vanished).
    for (const [activityId, tracked] of this.calls) {
      if (seen.has(activityId)) tracked.missed = false;
      else if (tracked.state !== 'direct' || tracked.missed) this.forget(activityId);
      else tracked.missed = true;
    }
  }

  /** The call's end was read in history: stop reading it, unless it streams directly (its end line comes from the worker). */
  ended(activityId: string): void {
    const tracked = this.calls.get(activityId);
    if (tracked?.state === 'direct') tracked.missed = true;
    else this.forget(activityId);
  }

  /** Stop reading the call now. */
  forget(activityId: string): void {
    this.calls.get(activityId)?.stop.abort();
    this.calls.delete(activityId);
  }

  /** Stops every read. */
  close(): void {
    for (const activityId of [...this.calls.keys()]) this.forget(activityId);
  }

  private source(source: 'direct' | 'heartbeat', detail: string): void {
    const key = `${source} ${detail}`;
    if (key === this.lastSource) return;
    this.lastSource = key;
    this.notify({ type: 'source', source, detail });
  }

  private fallBack(tracked: TrackedCall, why: string): void {
    tracked.state = 'heartbeat';
    this.source('heartbeat', why);
  }

  private readTail(tracked: TrackedCall, details: unknown): void {
    const tail = streamTailOfDetails(details);
    if (!tail) return;
    const increment = streamIncrement(tracked.told, tail);
    tracked.told = increment.printedCharacters;
    const { activityId, attempt, call } = tracked;
    if (increment.skipped > 0)
      this.notify({ type: 'skipped', activityId, attempt, call, characters: increment.skipped });
    if (increment.text) this.notify({ type: 'text', activityId, attempt, call, kind: 'tail', text: increment.text });
  }

  private async readDirect(tracked: TrackedCall, url: string): Promise<void> {
    const { activityId, attempt } = tracked;
    const address = new URL(url).host;
    // One controller for the whole read: aborted when the call is forgotten, or when the worker
    // has not answered within the connect timeout (the timer is cleared once it has).
    const connection = new AbortController();
    const abort = () => connection.abort();
    tracked.stop.signal.addEventListener('abort', abort, { once: true });
    const connectTimer = setTimeout(abort, this.options.connectTimeoutMs ?? 3_000);
    let response: Response;
    try {
      response = await this.fetch(url, { signal: connection.signal, headers: { accept: 'application/x-ndjson' } });
    } catch (error) {
      tracked.stop.signal.removeEventListener('abort', abort);
      if (tracked.stop.signal.aborted) return;
      const why = connection.signal.aborted ? 'no answer in time' : messageOf(error);
      return this.fallBack(tracked, `worker ${address} unreachable: ${why}`);
    } finally {
      clearTimeout(connectTimer);
    }
    if (response.status === 404) {
      // The attempt ended before we connected; its history event says the rest.
      tracked.state = 'ended';
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      return this.fallBack(tracked, `worker ${address} answered ${response.status}`);
    }
    this.source('direct', `worker ${address}`);
    const reader = new LiveTextLineReader(this.options.maxLineBytes);
    const body = response.body.getReader();
    const stopReading = () => void body.cancel().catch(() => undefined);
    tracked.stop.signal.addEventListener('abort', stopReading, { once: true });
    tracked.stop.signal.removeEventListener('abort', abort);
    try {
      for (;;) {
        const { done, value } = await body.read();
        if (done) break;
        for (const line of reader.read(value)) {
          if ('text' in line) {
            tracked.told += line.text.length;
            this.notify({ type: 'text', activityId, attempt, call: line.call, kind: line.kind, text: line.text });
          } else if ('skipped' in line) {
            tracked.told += line.skipped;
            const { call } = tracked;
            this.notify({ type: 'skipped', activityId, attempt, call, characters: line.skipped });
          } else {
            tracked.state = 'ended';
            return;
          }
        }
      }
      if (!tracked.stop.signal.aborted) this.fallBack(tracked, `worker ${address} closed the stream early`);
    } catch (error) {
      if (!tracked.stop.signal.aborted) this.fallBack(tracked, `worker ${address}: ${messageOf(error)}`);
    } finally {
      tracked.stop.signal.removeEventListener('abort', stopReading);
      if (tracked.state === 'ended') stopReading();
    }
  }
}

const messageOf = (error: unknown) => {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error instanceof Error ? error.message : String(error)}${cause}`.split('\n')[0] as string;
};

/** What {@link watchRunText} reads runs with: a `Client`, or a handle's `WorkflowClient`. */
export type RunDescriber = HistoryReader;

/** Options of {@link watchRunText}. */
export interface WatchRunTextOptions extends LiveTextWatcherOptions {
  /** Stops the iteration (it then ends without an error). */
  signal?: AbortSignal;
  /** How often the run is described while a model call is open and neither its URL nor its first text has come, in ms. Default 250. */
  pollMs?: number;
  /** How often the run is described while a call's text comes from its heartbeats, in ms. Default 1,000. */
  fallbackPollMs?: number;
  /**
   * How long the history's long poll waits after an answer before asking again, so a workflow
   * task's burst of events costs one poll (it delays noticing a new call by at most this; the
   * call's text is kept from its start, so none is lost). Default 250 ms.
   */
  historyPollPauseMs?: number;
  /** Called when the text's source changes (`direct`, from the worker at `detail`; or `heartbeat`, and why). */
  onSource?: (source: 'direct' | 'heartbeat', detail: string) => void;
}

/** How long a direct read still gets, after the run closed, to deliver its last pieces. */
const END_GRACE_MS = 2_000;

/**
 * The text of a run's model calls as they stream (`{ call, kind, text }`), until the run ends or
 * `signal` aborts. Text comes straight from the worker that runs the call, within milliseconds,
 * when the worker serves live text and this process can reach it; otherwise from the call's
 * heartbeat details, every few seconds, with `kind: 'tail'`. Never from history: a call's text is
 * gone once it completes (its reply is in the transcript).
 *
 * What it costs: the run's history is long-polled (one request outstanding, answered as events
 * come, asked again `historyPollPauseMs` after an answer) to learn when a model call opens and closes; while one is open the run is described
 * every `pollMs` until the call's URL or first text comes, then not at all while the text flows
 * directly (once every 10 s, a check that the worker is still there), or every `fallbackPollMs`
 * while it comes from heartbeats. Between model calls, no describes. After `signal` aborts, the
 * outstanding long poll ends with the connection (or when the server answers it).
 */
export async function* watchRunText(
  client: RunDescriber,
  workflowId: string,
  options: WatchRunTextOptions = {},
): AsyncGenerator<LiveTextChunk> {
  const queue: LiveTextChunk[] = [];
  let wake: (() => void) | undefined;
  const watcher = new LiveTextWatcher((notice) => {
    if (notice.type === 'text') queue.push({ call: notice.call, kind: notice.kind, text: notice.text });
    else if (notice.type === 'source') options.onSource?.(notice.source, notice.detail);
    wake?.();
  }, options);
  const signal = options.signal;
  /** Open `callModel` activities: activity id by scheduled event id. */
  const open = new Map<string, string>();
  let running = true;
  let stopped = false;
  let historyError: unknown;
  let currentRunId: string | undefined;

  const readHistory = async () => {
    for (;;) {
      let next: string | undefined;
      for await (const event of runHistory(client, workflowId, currentRunId, {
        pauseAfterEventsMs: options.historyPollPauseMs ?? 250,
      })) {
        if (stopped) return;
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled?.activityType?.name === MODEL_CALL_ACTIVITY && scheduled.activityId)
          open.set(String(event.eventId), scheduled.activityId);
        const ended =
          event.activityTaskCompletedEventAttributes ??
          event.activityTaskFailedEventAttributes ??
          event.activityTaskTimedOutEventAttributes ??
          event.activityTaskCanceledEventAttributes;
        const activityId = ended ? open.get(String(ended.scheduledEventId)) : undefined;
        if (activityId !== undefined) {
          open.delete(String(ended?.scheduledEventId));
          // A call read directly gets its end line from the worker; one read from heartbeats ends here.
          watcher.ended(activityId);
        }
        next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? next;
        wake?.();
      }
      if (!next || stopped) return;
      currentRunId = next;
      open.clear();
    }
  };
  const history = readHistory()
    .catch((error: unknown) => {
      if (!stopped) historyError = error;
    })
    .finally(() => {
      running = false;
      wake?.();
    });

  let nextDescribe = 0;
  let endGrace: number | undefined;
  try {
    while (!signal?.aborted) {
      while (queue.length) yield queue.shift() as LiveTextChunk;
      if (historyError) throw historyError;
      const now = Date.now();
      if (!running) {
        endGrace ??= now + END_GRACE_MS;
        if (!watcher.streaming || now >= endGrace) return;
      }
      if (running && open.size > 0 && now >= nextDescribe) {
        const description = await client.workflowService.describeWorkflowExecution({
          namespace: client.options.namespace,
          execution: { workflowId, ...(currentRunId ? { runId: currentRunId } : {}) },
        });
        watcher.observe(description.pendingActivities ?? []);
        nextDescribe = Date.now() + watcher.describeDelay(options.pollMs ?? 250, options.fallbackPollMs ?? 1_000);
        continue;
      }
      if (open.size === 0) nextDescribe = 0;
      // Until a notice, a history event, the next describe, or the signal.
      const until = !running ? (endGrace ?? now) : open.size > 0 ? nextDescribe : undefined;
      await new Promise<void>((resolve) => {
        const timer = until === undefined ? undefined : setTimeout(done, Math.max(0, until - now));
        signal?.addEventListener('abort', done, { once: true });
        wake = done;
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        }
      });
    }
  } finally {
    stopped = true;
    watcher.close();
    void history;
  }
}
