import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  modelLimitWaitOfDetails,
  streamIncrement,
  streamTailOfDetails,
  type StreamTail,
} from '../domain/model-stream-text';
import { activityRole } from './activity-roles';
import type { HistoryEvent } from './run-events';

/** Lines of streamed text start with this, apart from the steps' own lines. */
export const STREAM_LINE_PREFIX = '  ┆ ';

/** Longest streamed line printed (prefix included); longer text is wrapped. */
export const STREAM_LINE_WIDTH = 100;

/** How often the pending model call is described while one is open. */
export const STREAM_POLL_INTERVAL_MS = 1_000;

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

/** The stream tail in a pending activity's heartbeat details; undefined when there is none or it cannot be read. */
export function streamTailOfPendingActivity(activity: PendingActivity): StreamTail | undefined {
  const first = activity.heartbeatDetails?.payloads?.[0];
  if (!first) return undefined;
  try {
    return streamTailOfDetails(defaultPayloadConverter.fromPayload(first));
  } catch {
    return undefined;
  }
}

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
  /** The attempt whose wait for the model's limit was printed. */
  waitNoted?: number;
  /** The attempt whose text was printed, and how far. */
  attempt?: number;
  printedCharacters?: number;
  held: string;
}

/**
 * What `follow` prints of the model calls that are streaming: which `callModel` activities are
 * open (from the history events read so far), how far each one's text was printed, and the
 * lines for a pending activity's latest heartbeat details. No clock, no client: the poller
 * ({@link watchStreamingCalls}) feeds it.
 */
export class StreamedTextPrinter {
  /** Open `callModel` activities by activity id. */
  private readonly open = new Map<string, OpenCall>();
  /** Activity ids of scheduled `callModel` events by their event id. */
  private readonly scheduled = new Map<string, string>();

  /** Whether a model call is open (worth describing the run for). */
  get watching(): boolean {
    return this.open.size > 0;
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
        this.open.set(activityId, { held: '' });
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
    return call ? flushStreamLines(call.held) : [];
  }

  /** The lines to print for the run's pending activities now (only open model calls; only what is new). */
  pending(activities: PendingActivity[]): string[] {
    const lines: string[] = [];
    for (const activity of activities) {
      const call = this.open.get(activity.activityId ?? '');
      if (!call) continue;
      const wait = modelLimitWaitOfPendingActivity(activity);
      // Once per attempt: the call waits for its model's shared limit before its request.
      if (wait && call.waitNoted !== Number(activity.attempt ?? 1)) {
        call.waitNoted = Number(activity.attempt ?? 1);
        lines.push(`  (${wait})`);
      }
      const tail = streamTailOfPendingActivity(activity);
      if (!tail) continue;
      const attempt = Number(activity.attempt ?? 1);
      if (call.attempt !== undefined && call.attempt !== attempt) {
        // A new attempt streams its reply from the start.
        lines.push(...flushStreamLines(call.held), `  (attempt ${attempt} of the model call)`);
        call.held = '';
        call.printedCharacters = undefined;
      }
      const increment = streamIncrement(call.printedCharacters, tail);
      call.attempt = attempt;
      call.printedCharacters = increment.printedCharacters;
      if (!increment.text) continue;
      if (increment.skipped > 0) {
        lines.push(...flushStreamLines(call.held));
        call.held = '';
        lines.push(`${STREAM_LINE_PREFIX}… (${increment.skipped.toLocaleString('en-US')} characters before)`);
      }
      const split = streamLines(call.held, increment.text);
      call.held = split.held;
      lines.push(...split.lines);
    }
    return lines;
  }
}

/**
 * Describes the run every {@link STREAM_POLL_INTERVAL_MS} while the current `printer` (one per
 * run of the chain) says a model call is open, and prints what it streamed since the last look, until `signal` aborts. Best effort: a
 * failed describe is skipped (the history reader reports lost connections).
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
  while (!signal.aborted) {
    try {
      await delay(intervalMs, undefined, { signal });
    } catch {
      return;
    }
    const current = printer();
    if (!current.watching) continue;
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
  }
}
