/**
 * Why a benchmark's retried model calls were retried, from the workers' activity traces
 * (REACT_AGENT_ACTIVITY_TRACE_FILE, worker/activity-trace.ts): whether each failed attempt ever
 * started running on a worker. An attempt Temporal recorded as started that no worker ran was lost
 * between the server and the workers (issue 20: a busy dev server), not timed out by a worker.
 */
import { readFileSync } from 'node:fs';

/** A retried activity: the attempt that finally started (history records only that one). */
export interface RetriedActivity {
  workflowId: string;
  activityId: string;
  attempt: number;
}

/** What the traces say of the failed attempts (each retried activity's attempts before its last). */
export interface RetryExplanation {
  /** Failed attempts that started on no worker: recorded as started by the server, never delivered. */
  neverStarted: number;
  /** Failed attempts that started on a worker (timed out or failed there). */
  startedOnAWorker: number;
}

/** The `start` events in trace lines (JSON, one per line), as `workflowId/activityId/attempt` keys. */
export function startedAttempts(lines: Iterable<string>): Set<string> {
  const started = new Set<string>();
  for (const line of lines) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as { event?: string; workflowId?: string; activityId?: string; attempt?: number };
    if (event.event === 'start') started.add(`${event.workflowId}/${event.activityId}/${event.attempt}`);
  }
  return started;
}

/** Counts the failed attempts of the retried activities that some worker started, and those none did. */
export function explainRetries(retried: RetriedActivity[], started: Set<string>): RetryExplanation {
  const explanation: RetryExplanation = { neverStarted: 0, startedOnAWorker: 0 };
  for (const activity of retried) {
    for (let attempt = 1; attempt < activity.attempt; attempt += 1) {
      if (started.has(`${activity.workflowId}/${activity.activityId}/${attempt}`)) explanation.startedOnAWorker += 1;
      else explanation.neverStarted += 1;
    }
  }
  return explanation;
}

/** The trace files' lines. */
export function readTraceLines(files: string[]): string[] {
  return files.flatMap((file) => readFileSync(file, 'utf8').split('\n'));
}
