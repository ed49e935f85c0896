import { defaultPayloadConverter } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  LiveTextLineReader,
  liveTextPointerOfDetails,
  modelCallOfDetails,
  parseRunTextLine,
  type LiveTextChunk,
  type LiveTextKind,
  type LiveTextPointer,
  type RunTextLine,
} from '../domain/live-text';
import { callSource } from '../domain/live-text-sources';
import { nextRunDescribeAt, type RunDescribeCadence } from '../domain/live-text-describes';
import { streamIncrement, streamTailOfDetails } from '../domain/model-stream-text';
import { runHistory, type HistoryEvent, type HistoryReader } from './run-history';

/*
 * Reading a run's live text (issue 32), the one way `react-agent follow` and your own code do it:
 * describe the run, find its streaming model call's heartbeat details, connect to the run stream
 * they point to on that worker (which then pushes every call of the run that lands there, each
 * piece as the model streams it, with no further describe) or to the call's own URL, and fall
 * back to the details' bounded tail (sent by the worker at most every 5 s) when neither can be
 * reached.
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
  | { type: 'source'; source: 'direct' | 'heartbeat'; detail: string }
  /** A run stream from a worker connected, showed a new attempt (`open`), or closed. */
  | { type: 'runStream'; url: string; open: boolean };

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
  /** Read run streams (`liveText.runUrl`) when the details carry one: every call of the run on that worker pushed, no describe needed. Default true. */
  runStreams?: boolean;
}

interface TrackedCall {
  activityId: string;
  attempt: number;
  call: number;
  /** Characters of the attempt's text told (or told skipped). */
  told: number;
  /** `run`: read through a run stream (`stream`). */
  state: 'waiting' | 'direct' | 'run' | 'heartbeat' | 'ended';
  stop: AbortController;
  /** Not pending at the last look. */
  missed?: boolean;
  /** The run stream it is read through (state `run`). */
  stream?: RunStream;
  /** Its own URL, read if the run stream is refused. */
  url?: string;
}

/** A run's stream from one worker (`GET <base>/runs/<token>`). */
interface RunStream {
  url: string;
  state: 'connecting' | 'open' | 'closed';
  stop: AbortController;
}

/** Run stream URLs remembered as failed (a worker that refused or could not be reached): at most this many. */
const MAX_FAILED_RUN_STREAMS = 64;

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
 * details carry a run stream's URL (`liveText.runUrl`) is read through that stream, which then
 * pushes every later call of the run that lands on the same worker (with no describe); one whose
 * details carry only its own URL is read from it; otherwise, or when those fail, from the
 * details' tail. Bounded: one connection per run stream and per call read by its own URL, lines
 * of at most `maxLineBytes`, a connection that does not answer in `connectTimeoutMs` given up,
 * at most 64 run streams remembered as failed.
 */
export class LiveTextWatcher {
  private readonly calls = new Map<string, TrackedCall>();
  private readonly runStreams = new Map<string, RunStream>();
  /** Run stream URLs that failed (not tried again): insertion order, the oldest dropped past the bound. */
  private readonly failedRunStreams = new Set<string>();
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
   * every call is pushed by its worker (`directMs`, a check that the worker is still there).
   */
  describeDelay(waitingMs: number, fallbackMs: number, directMs = 10_000): number {
    const states = [...this.calls.values()].map((call) => call.state);
    if (states.includes('heartbeat')) return fallbackMs;
    if ((states.includes('direct') || states.includes('run')) && !states.includes('waiting')) return directMs;
    return waitingMs;
  }

  /** The calls by how their text comes now, and the run streams connected: what {@link nextRunDescribeAt} weighs. */
  describeState(): { pushed: number; waiting: number; heartbeat: number; runStreams: number } {
    const state = { pushed: 0, waiting: 0, heartbeat: 0, runStreams: 0 };
    for (const call of this.calls.values()) {
      if (call.state === 'direct' || call.state === 'run') state.pushed += 1;
      else if (call.state === 'waiting') state.waiting += 1;
      else if (call.state === 'heartbeat') state.heartbeat += 1;
    }
    for (const stream of this.runStreams.values()) if (stream.state === 'open') state.runStreams += 1;
    return state;
  }

  /** Whether each of these `callModel` activities is pushed by its worker now (none needs a describe). */
  pushes(activityIds: Iterable<string>): boolean {
    for (const activityId of activityIds) {
      const state = this.calls.get(activityId)?.state;
      if (state !== 'direct' && state !== 'run') return false;
    }
    return true;
  }

  /** Whether a call is being read from the worker directly now. */
  get streaming(): boolean {
    return [...this.calls.values()].some((call) => call.state === 'direct' || call.state === 'run');
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
      // An older attempt than the one a run stream already shows is a describe behind the stream.
      if (tracked && tracked.attempt > attempt) continue;
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
        const runUrl = this.options.runStreams === false ? undefined : pointer?.runUrl;
        const stream = runUrl ? this.runStreams.get(runUrl) : undefined;
        const streamState = stream && stream.state !== 'closed' ? stream.state : 'none';
        const source = callSource({
          callUrl: pointer !== undefined,
          runUrl: runUrl !== undefined,
          runStream: runUrl && this.failedRunStreams.has(runUrl) ? 'failed' : streamState,
          tail: streamTailOfDetails(details) !== undefined,
        });
        if (source === 'wait') continue;
        if (source === 'open-run-stream' || source === 'join-run-stream') {
          tracked.state = 'run';
          tracked.url = pointer?.url;
          tracked.stream = source === 'join-run-stream' && stream ? stream : this.openRunStream(runUrl as string);
          continue;
        }
        if (source === 'call-url') {
          this.startDirect(tracked, (pointer as LiveTextPointer).url);
          continue;
        }
        this.fallBack(tracked, this.options.direct === false ? 'direct channel not used' : 'the worker serves none');
      }
      if (tracked.state === 'heartbeat') this.readTail(tracked, details);
    }
    // Calls no longer pending ended; one pushed by its worker gets its end line from it, and is
    // forgotten only when it is still open at the next look (a worker that vanished).
    for (const [activityId, tracked] of this.calls) {
      if (seen.has(activityId)) tracked.missed = false;
      else if ((tracked.state !== 'direct' && tracked.state !== 'run') || tracked.missed) this.forget(activityId);
      else tracked.missed = true;
    }
  }

  /** The call's end was read in history: stop reading it, unless its worker pushes it (its end line comes from there). */
  ended(activityId: string): void {
    const tracked = this.calls.get(activityId);
    if (tracked?.state === 'direct' || tracked?.state === 'run') tracked.missed = true;
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
    for (const stream of this.runStreams.values()) stream.stop.abort();
    this.runStreams.clear();
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

  /**
   * GETs `url` with the connect timeout; the response, or why not (`stop` aborted: undefined).
   * The timer is cleared once the worker answered; `stop` aborts the read after that too.
   */
  private async connect(url: string, stop: AbortSignal): Promise<Response | { failed: string } | undefined> {
    const connection = new AbortController();
    const abort = () => connection.abort();
    stop.addEventListener('abort', abort, { once: true });
    const connectTimer = setTimeout(abort, this.options.connectTimeoutMs ?? 3_000);
    try {
      return await this.fetch(url, { signal: connection.signal, headers: { accept: 'application/x-ndjson' } });
    } catch (error) {
      stop.removeEventListener('abort', abort);
      if (stop.aborted) return undefined;
      return { failed: connection.signal.aborted ? 'no answer in time' : messageOf(error) };
    } finally {
      clearTimeout(connectTimer);
    }
  }

  /**
   * Reads a stream's lines until it ends, `onLine` returns false, or `stop` aborts; throws what
   * broke it (a bad line, a lost connection).
   */
  private async readLines<Line>(
    body: ReadableStream<Uint8Array>,
    reader: LiveTextLineReader<Line>,
    stop: AbortSignal,
    onLine: (line: Line) => boolean,
  ): Promise<'ended' | 'closed'> {
    const bytes = body.getReader();
    const stopReading = () => void bytes.cancel().catch(() => undefined);
    stop.addEventListener('abort', stopReading, { once: true });
    try {
      for (;;) {
        const { done, value } = await bytes.read();
        if (done) return 'closed';
        for (const line of reader.read(value)) if (!onLine(line)) return 'ended';
      }
    } finally {
      stop.removeEventListener('abort', stopReading);
      stopReading();
    }
  }

  private startDirect(tracked: TrackedCall, url: string): void {
    const { activityId, attempt } = tracked;
    tracked.state = 'direct';
    tracked.stream = undefined;
    void this.readDirect(tracked, url).finally(() => this.notify({ type: 'closed', activityId, attempt }));
  }

  private async readDirect(tracked: TrackedCall, url: string): Promise<void> {
    const { activityId, attempt } = tracked;
    const address = new URL(url).host;
    const response = await this.connect(url, tracked.stop.signal);
    if (!response) return;
    if (!(response instanceof Response))
      return this.fallBack(tracked, `worker ${address} unreachable: ${response.failed}`);
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
    try {
      const how = await this.readLines(
        response.body,
        new LiveTextLineReader(this.options.maxLineBytes),
        tracked.stop.signal,
        (line) => {
          if ('text' in line) {
            tracked.told += line.text.length;
            this.notify({ type: 'text', activityId, attempt, call: line.call, kind: line.kind, text: line.text });
          } else if ('skipped' in line) {
            tracked.told += line.skipped;
            const { call } = tracked;
            this.notify({ type: 'skipped', activityId, attempt, call, characters: line.skipped });
          } else {
            tracked.state = 'ended';
            return false;
          }
          return true;
        },
      );
      if (how === 'closed' && !tracked.stop.signal.aborted)
        this.fallBack(tracked, `worker ${address} closed the stream early`);
    } catch (error) {
      if (!tracked.stop.signal.aborted) this.fallBack(tracked, `worker ${address}: ${messageOf(error)}`);
    }
  }

  private openRunStream(url: string): RunStream {
    const stream: RunStream = { url, state: 'connecting', stop: new AbortController() };
    this.runStreams.set(url, stream);
    void this.readRunStream(stream).finally(() => {
      stream.state = 'closed';
      if (this.runStreams.get(url) === stream) this.runStreams.delete(url);
      this.notify({ type: 'runStream', url, open: false });
    });
    return stream;
  }

  /** The attempts read through `stream` that it has not ended. */
  private callsOf(stream: RunStream): TrackedCall[] {
    return [...this.calls.values()].filter((call) => call.state === 'run' && call.stream === stream);
  }

  private failRunStream(stream: RunStream, remember: boolean): void {
    if (remember) {
      this.failedRunStreams.add(stream.url);
      for (const url of this.failedRunStreams) {
        if (this.failedRunStreams.size <= MAX_FAILED_RUN_STREAMS) break;
        this.failedRunStreams.delete(url);
      }
    }
  }

  private async readRunStream(stream: RunStream): Promise<void> {
    const address = new URL(stream.url).host;
    const response = await this.connect(stream.url, stream.stop.signal);
    if (!response) return;
    if (!(response instanceof Response) || response.status !== 200 || !response.body) {
      if (response instanceof Response) await response.body?.cancel().catch(() => undefined);
      // Refused (404: the worker no longer remembers the run) or unreachable (not tried again):
      // the attempts waiting for it are read by their own URLs.
      this.failRunStream(stream, !(response instanceof Response && response.status === 404));
      for (const tracked of this.callsOf(stream)) {
        if (tracked.url) this.startDirect(tracked, tracked.url);
        else tracked.state = 'waiting';
      }
      return;
    }
    stream.state = 'open';
    this.source('direct', `worker ${address}`);
    this.notify({ type: 'runStream', url: stream.url, open: true });
    let why = 'closed the run stream';
    try {
      await this.readLines(
        response.body,
        new LiveTextLineReader(this.options.maxLineBytes, parseRunTextLine),
        stream.stop.signal,
        (line) => {
          this.readRunLine(stream, line);
          return true;
        },
      );
    } catch (error) {
      why = messageOf(error);
      if (!stream.stop.signal.aborted) this.failRunStream(stream, true);
    }
    if (stream.stop.signal.aborted) return;
    // Attempts it left open (a worker that went away mid-call) go on from their heartbeats, from where they were.
    for (const tracked of this.callsOf(stream)) this.fallBack(tracked, `worker ${address}: ${why}`);
  }

  private readRunLine(stream: RunStream, { activityId, attempt, line }: RunTextLine): void {
    let tracked = this.calls.get(activityId);
    if ('opened' in line) {
      if (tracked && tracked.attempt > attempt) return;
      if (tracked && tracked.attempt === attempt) {
        if (tracked.state === 'waiting' || (tracked.state === 'run' && tracked.stream?.state !== 'open')) {
          tracked.state = 'run';
          tracked.stream = stream;
          tracked.call = line.call;
        }
        return;
      }
      if (tracked) {
        tracked.stop.abort();
        this.notify({ type: 'attempt', activityId, attempt, call: line.call });
      }
      tracked = { activityId, attempt, call: line.call, told: 0, state: 'run', stream, stop: new AbortController() };
      this.calls.set(activityId, tracked);
      this.notify({ type: 'runStream', url: stream.url, open: true });
      return;
    }
    if (!tracked || tracked.attempt !== attempt || tracked.state !== 'run' || tracked.stream !== stream) return;
    const { call } = tracked;
    if ('text' in line) {
      tracked.told += line.text.length;
      this.notify({ type: 'text', activityId, attempt, call: line.call, kind: line.kind, text: line.text });
    } else if ('skipped' in line) {
      tracked.told += line.skipped;
      this.notify({ type: 'skipped', activityId, attempt, call, characters: line.skipped });
    } else {
      tracked.state = 'ended';
      this.notify({ type: 'closed', activityId, attempt });
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
  /**
   * How often the run is described while a model call is open and neither its URL nor its first
   * text has come, in ms; also the first step of the backoff that looks for calls before a run
   * stream is open. Default 250.
   */
  pollMs?: number;
  /** How often the run is described while a call's text comes from its heartbeats, in ms. Default 1,000. */
  fallbackPollMs?: number;
  /** While every open call is pushed by its worker: how often the run is described anyway (a worker that hangs), in ms. Default 10,000. */
  pushedCheckMs?: number;
  /**
   * With a run stream open and no call open: how long the run's next call has to show up on the
   * stream before the run is described to look for it elsewhere (another worker), in ms; the
   * backoff doubles from there. Default 1,000.
   */
  runStreamQuietMs?: number;
  /** The backoff's cap: with no call open, the run is described at least this often, in ms. Default 2,000. */
  maxQuietMs?: number;
  /**
   * Until a run stream opens: how long the history's long poll waits after an answer before
   * asking again, so a workflow task's burst of events costs one poll (it delays noticing a new
   * call by at most this; the call's text is kept from its start, so none is lost). Default 250 ms.
   */
  historyPollPauseMs?: number;
  /** Called when the text's source changes (`direct`, from the worker at `detail`; or `heartbeat`, and why). */
  onSource?: (source: 'direct' | 'heartbeat', detail: string) => void;
}

/** How long a direct read still gets, after the run closed, to deliver its last pieces. */
const END_GRACE_MS = 2_000;

/**
 * The run's close event, from a long poll that the server answers only then (or empty, after its
 * long-poll timeout, when it is asked again); undefined if `stopped` first.
 */
async function closeEventOf(
  client: RunDescriber,
  workflowId: string,
  runId: string | undefined,
  stopped: () => boolean,
): Promise<HistoryEvent | undefined> {
  let close: HistoryEvent | undefined;
  for await (const event of runHistory(client, workflowId, runId, { closeEventOnly: true, stopBefore: stopped }))
    close = event;
  return stopped() ? undefined : close;
}

/**
 * The text of a run's model calls as they stream (`{ call, kind, text }`), until the run ends or
 * `signal` aborts. Text comes straight from the worker that runs the call, within milliseconds,
 * when the worker serves live text and this process can reach it; otherwise from the call's
 * heartbeat details, every few seconds, with `kind: 'tail'`. Never from history: a call's text is
 * gone once it completes (its reply is in the transcript).
 *
 * What it costs Temporal, in two phases. Until a run stream is open: the run's history is
 * long-polled (one request outstanding, answered as events come, asked again `historyPollPauseMs`
 * after an answer) to learn when a model call opens, and while one is open the run is described
 * every `pollMs` until the call's URL or first text comes (every `fallbackPollMs` while it comes
 * from heartbeats). Once a worker's run stream is open (from the first call's heartbeat), that
 * worker pushes every later call of the run that lands there: the history is then long-polled
 * only for its close event (one request that wakes when the run ends or continues as new, after
 * which the new run is watched from the first phase), and the run is described only as
 * `src/domain/live-text-describes.ts` says — none for a pushed call but a check every
 * `pushedCheckMs` (10 s); with no call open, `runStreamQuietMs` (1 s) after the last call ended,
 * then doubling to every `maxQuietMs` (2 s), to find a call that landed on another worker. After
 * `signal` aborts, the outstanding long poll ends with the connection (or when the server answers
 * it).
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
  const cadence: RunDescribeCadence = {
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.fallbackPollMs !== undefined ? { fallbackPollMs: options.fallbackPollMs } : {}),
    ...(options.pushedCheckMs !== undefined ? { pushedCheckMs: options.pushedCheckMs } : {}),
    ...(options.runStreamQuietMs !== undefined ? { runStreamQuietMs: options.runStreamQuietMs } : {}),
    ...(options.maxQuietMs !== undefined ? { maxQuietMs: options.maxQuietMs } : {}),
  };
  const signal = options.signal;
  let running = true;
  let stopped = false;
  let historyError: unknown;
  let currentRunId: string | undefined;
  /**
   * `history`: the run's history is long-polled for its model calls (until a run stream opens);
   * `close`: only for its close event, the calls pushed by run streams or found by describes.
   */
  let phase: 'history' | 'close' = 'history';
  /** Open `callModel` activities (phase `history`): activity id by scheduled event id. */
  const open = new Map<string, string>();
  let nextDescribe = 0;
  let lastDescribeAt: number | undefined;
  let quietSince = Date.now();
  let quietDescribes = 0;
  let wasOpen = false;

  const readRun = async () => {
    for (;;) {
      let next: string | undefined;
      let switched = false;
      // A run stream is open: its worker pushes the run's calls there; the history is read no
      // further, but for its close event (an event of the last page not read yet is found by it).
      const streamOpen = () => !stopped && !next && watcher.describeState().runStreams > 0;
      for await (const event of runHistory(client, workflowId, currentRunId, {
        pauseAfterEventsMs: options.historyPollPauseMs ?? 250,
        stopBefore: () => (switched = streamOpen()),
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
          // A call pushed by its worker gets its end line from it; one read from heartbeats ends here.
          watcher.ended(activityId);
        }
        next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? next;
        wake?.();
      }
      if (switched) {
        phase = 'close';
        open.clear();
        const now = Date.now();
        lastDescribeAt = now;
        quietSince = now;
        quietDescribes = 0;
        wake?.();
        const closed = await closeEventOf(client, workflowId, currentRunId, () => stopped);
        next = closed?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      if (!next || stopped) return;
      // The new run's calls have a new run stream: its history is read until one opens.
      currentRunId = next;
      phase = 'history';
      open.clear();
      watcher.close();
      nextDescribe = 0;
    }
  };
  const reading = readRun()
    .catch((error: unknown) => {
      if (!stopped) historyError = error;
    })
    .finally(() => {
      running = false;
      wake?.();
    });

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
      let describeAt: number | undefined;
      if (running && phase === 'history') {
        // As the history shows a model call open, until its URL or first text comes.
        if (open.size === 0) nextDescribe = 0;
        describeAt = open.size > 0 ? nextDescribe : undefined;
      } else if (running) {
        const state = watcher.describeState();
        const openNow = state.pushed + state.waiting + state.heartbeat > 0;
        if (wasOpen && !openNow) {
          quietSince = now;
          quietDescribes = 0;
        }
        wasOpen = openNow;
        describeAt = nextRunDescribeAt({ ...state, lastDescribeAt, quietSince, quietDescribes }, cadence);
        if (describeAt <= now && !openNow) quietDescribes += 1;
      }
      if (describeAt !== undefined && describeAt <= now) {
        lastDescribeAt = now;
        const description = await client.workflowService.describeWorkflowExecution({
          namespace: client.options.namespace,
          execution: { workflowId, ...(currentRunId ? { runId: currentRunId } : {}) },
        });
        currentRunId ??= description.workflowExecutionInfo?.execution?.runId ?? undefined;
        watcher.observe(description.pendingActivities ?? []);
        if (phase === 'history')
          nextDescribe = Date.now() + watcher.describeDelay(options.pollMs ?? 250, options.fallbackPollMs ?? 1_000);
        continue;
      }
      // Until a notice, a history event, the next describe, or the signal.
      const until = !running ? (endGrace ?? now) : describeAt;
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
    void reading;
  }
}
