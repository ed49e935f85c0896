import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { setTimeout as delay } from 'node:timers/promises';
import { LiveTextWatcher, type LiveTextNotice, type LiveTextWatcherOptions } from '../client/live-text';
import { DEFAULT_RUN_DESCRIBE_CADENCE } from '../domain/live-text-describes';
import { modelLimitWaitOfDetails } from '../domain/model-stream-text';
import { activityRole } from './activity-roles';
import type { HistoryEvent } from './run-events';

/** Lines of streamed text start with this, apart from the steps' own lines. */
export const STREAM_LINE_PREFIX = '  ┆ ';

/** Longest streamed line printed (prefix included); longer text is wrapped. */
export const STREAM_LINE_WIDTH = 100;

/** How often the pending model call is described while its text comes from its heartbeat details. */
export const STREAM_POLL_INTERVAL_MS = 1_000;

/** How often it is described while a call is open and neither its live text URL nor its first text has come. */
export const STREAM_URL_POLL_INTERVAL_MS = 250;

/** How often follow checks, without asking the server, whether a model call has opened. */
const STREAM_OPEN_CHECK_MS = 100;

/** Text turned into whole lines, and the unfinished rest held back for the next piece. */
export interface StreamLines {
  lines: string[];
  held: string;
}

/**
 * Splits streamed text into the lines to print now: each newline ends a line, and a line longer
 * than `width` characters is printed at a space before it (or cut there, without one). What is
 * left after the last line is held until more text comes or {@link flushStreamLines}.
 */
export function streamLines(
  held: string,
  text: string,
  width = STREAM_LINE_WIDTH - STREAM_LINE_PREFIX.length,
): StreamLines {
  const lines: string[] = [];
  let rest = held + text.replace(/\r\n?/g, '\n');
  for (;;) {
    const newline = rest.indexOf('\n');
    if (newline !== -1 && newline <= width) {
      lines.push(rest.slice(0, newline));
      rest = rest.slice(newline + 1);
      continue;
    }
    if (rest.length <= width) break;
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(space > 0 ? cut + 1 : cut);
  }
  return { lines: lines.map((line) => STREAM_LINE_PREFIX + line.trimEnd()), held: rest };
}

/** The held rest as a last line ([] when nothing is held). */
export function flushStreamLines(held: string): string[] {
  return held.trim() ? [STREAM_LINE_PREFIX + held.trimEnd()] : [];
}

/** One pending activity as `DescribeWorkflowExecution` reports it. */
export type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** "waiting 12 s for gpt-x's tokens-per-minute limit" when a pending model call waits for its model's shared limit. */
export function modelLimitWaitOfPendingActivity(activity: PendingActivity): string | undefined {
  if (activityRole(activity.activityType?.name ?? '') !== 'model') return undefined;
  const first = activity.heartbeatDetails?.payloads?.[0];
  if (!first) return undefined;
  try {
    return modelLimitWaitOfDetails(defaultPayloadConverter.fromPayload(first));
  } catch {
    return undefined;
  }
}

interface OpenCall {
  /** The unfinished line of its text, held until more comes or the call ends. */
  held: string;
  /** The attempt whose wait for the model's shared limit was printed. */
  waitNoted?: number;
}

/** Settings of a {@link StreamedTextPrinter}. */
export interface StreamedTextPrinterOptions {
  /** How the live text is read (`src/client/live-text.ts`); default: directly from the worker when it serves it. */
  live?: LiveTextWatcherOptions;
  /** Where lines go that come between two looks at the run (text pushed by the worker). Default: dropped. */
  print?: (line: string) => void;
}

/**
 * What `follow` prints of the model calls that are streaming: which `callModel` activities are
 * open (from the history events read so far), and their text as the run's {@link LiveTextWatcher}
 * reads it — pushed by the worker as it streams when it can be reached, else from each look at
 * the pending activity's heartbeat details ({@link pending}) — wrapped into lines, with one line
 * saying where the text comes from when that changes.
 */
export class StreamedTextPrinter {
  /** Open `callModel` activities by activity id. */
  private readonly open = new Map<string, OpenCall>();
  /** Activity ids of scheduled `callModel` events by their event id. */
  private readonly scheduled = new Map<string, string>();
  private readonly watcher: LiveTextWatcher;
  /** Lines of notices that come while {@link pending} runs, returned by it. */
  private collected: string[] | undefined;

  constructor(private readonly options: StreamedTextPrinterOptions = {}) {
    this.watcher = new LiveTextWatcher((notice) => {
      const lines = this.linesOf(notice);
      if (this.collected) this.collected.push(...lines);
      else for (const line of lines) this.options.print?.(line);
    }, options.live);
  }

  /** Whether a model call is open (worth describing the run for). */
  get watching(): boolean {
    return this.open.size > 0;
  }

  /** Whether a run stream from a worker is open (the run's next call there is pushed). */
  get runStreamOpen(): boolean {
    return this.watcher.describeState().runStreams > 0;
  }

  /** Whether every open call's text is pushed by its worker (a run stream showed it): no describe needed. */
  get pushed(): boolean {
    return this.watcher.pushes(this.open.keys());
  }

  /** How long until the run is worth describing again (see {@link LiveTextWatcher.describeDelay}). */
  describeDelay(waitingMs: number, fallbackMs: number): number {
    return this.watcher.describeDelay(waitingMs, fallbackMs);
  }

  /**
   * Reads one history event: a scheduled `callModel` opens a call; its end (completed, failed,
   * timed out, cancelled) closes it and returns the held rest of its text, to print before the
   * event's own lines.
   */
  read(event: HistoryEvent): string[] {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const activityId = scheduled.activityId ?? '';
      if (activityRole(scheduled.activityType?.name ?? '') === 'model' && activityId) {
        this.scheduled.set(String(event.eventId), activityId);
        if (!this.open.has(activityId)) this.open.set(activityId, { held: '' });
      }
      return [];
    }
    const ended =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    const activityId = ended ? this.scheduled.get(String(ended.scheduledEventId)) : undefined;
    if (activityId === undefined) return [];
    this.scheduled.delete(String(ended?.scheduledEventId));
    const call = this.open.get(activityId);
    this.open.delete(activityId);
    this.watcher.forget(activityId);
    return call ? flushStreamLines(call.held) : [];
  }

  /** The lines for the run's pending activities now (only open model calls; only what is new). */
  pending(activities: PendingActivity[]): string[] {
    const collected: string[] = [];
    this.collected = collected;
    try {
      // A new attempt's line (the watcher's) comes before that attempt's wait.
      this.watcher.observe(activities.filter((activity) => this.open.has(activity.activityId ?? '')));
    } finally {
      this.collected = undefined;
    }
    for (const activity of activities) {
      const call = this.open.get(activity.activityId ?? '');
      const wait = call ? modelLimitWaitOfPendingActivity(activity) : undefined;
      // Once per attempt: the call waits for its model's shared limit before its request.
      if (call && wait && call.waitNoted !== Number(activity.attempt ?? 1)) {
        call.waitNoted = Number(activity.attempt ?? 1);
        collected.push(`  (${wait})`);
      }
    }
    return collected;
  }

  /** Stops reading (the run ended, or follow moved on to the next run of the chain). */
  close(): void {
    this.watcher.close();
  }

  private linesOf(notice: LiveTextNotice): string[] {
    if (notice.type === 'source')
      return [
        notice.source === 'direct'
          ? `  (live text: direct from ${notice.detail})`
          : `  (live text: heartbeat details, every few seconds; ${notice.detail})`,
      ];
    if (notice.type === 'closed' || notice.type === 'runStream') return [];
    let call = this.open.get(notice.activityId);
    // A run stream can show a call's text before follow reads the call's scheduling in history.
    if (!call && notice.type === 'text') {
      call = { held: '' };
      this.open.set(notice.activityId, call);
    }
    if (!call) return [];
    if (notice.type === 'attempt') {
      const lines = [...flushStreamLines(call.held), `  (attempt ${notice.attempt} of the model call)`];
      call.held = '';
      return lines;
    }
    if (notice.type === 'skipped') {
      const lines = flushStreamLines(call.held);
      call.held = '';
      return [...lines, `${STREAM_LINE_PREFIX}… (${notice.characters.toLocaleString('en-US')} characters before)`];
    }
    const split = streamLines(call.held, notice.text);
    call.held = split.held;
    return split.lines;
  }
}

/**
 * Looks at the run while the current `printer` (one per run of the chain) says a model call is
 * open — soon after it opens, until its text flows from the worker or its heartbeats — and prints
 * what it streamed, until `signal` aborts. Text the worker pushes is printed as it comes, between
 * looks. Once a run stream from a worker is open, a call that opens is given 1 s to show up on it
 * before the run is described, and a call it shows is not described for but every 10 s (a check
 * that its worker is still there). Best effort: a failed describe is skipped (the history reader
 * reports lost connections).
 */
export async function watchStreamingCalls(
  client: Client,
  workflowId: string,
  runId: () => string | undefined,
  printer: () => StreamedTextPrinter,
  print: (line: string) => void,
  signal: AbortSignal,
  intervalMs = STREAM_POLL_INTERVAL_MS,
): Promise<void> {
  let nextLook = 0;
  let lastDescribe = Date.now();
  while (!signal.aborted) {
    const current = printer();
    const wait = current.watching ? Math.max(0, nextLook - Date.now()) : STREAM_OPEN_CHECK_MS;
    try {
      await delay(Math.min(wait, STREAM_OPEN_CHECK_MS), undefined, { signal });
    } catch {
      return;
    }
    if (!current.watching) {
      nextLook = 0;
      continue;
    }
    // With a run stream open, a new call has a moment to show up on it before the run is described.
    if (nextLook === 0)
      nextLook = Date.now() + (current.runStreamOpen ? DEFAULT_RUN_DESCRIBE_CADENCE.runStreamQuietMs : 0);
    if (Date.now() < nextLook || printer() !== current) continue;
    // Calls a run stream pushes need no look but the rare check that their worker is still there.
    const checkAt = lastDescribe + DEFAULT_RUN_DESCRIBE_CADENCE.pushedCheckMs;
    if (current.pushed && Date.now() < checkAt) {
      nextLook = checkAt;
      continue;
    }
    lastDescribe = Date.now();
    try {
      const description = await client.workflowService.describeWorkflowExecution({
        namespace: client.options.namespace,
        execution: { workflowId, ...(runId() ? { runId: runId() } : {}) },
      });
      if (signal.aborted) return;
      if (printer() !== current) continue;
      for (const line of current.pending(description.pendingActivities ?? [])) print(line);
    } catch {
      // Skipped; the next look may work.
    }
    nextLook = Date.now() + current.describeDelay(STREAM_URL_POLL_INTERVAL_MS, intervalMs);
  }
}
