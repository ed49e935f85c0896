/**
 * A trace of the activities a worker runs, one JSON line per event, for finding where an
 * attempt's time went (issue 20: model calls that timed out on their heartbeat under load).
 * Set `REACT_AGENT_ACTIVITY_TRACE_FILE` to a file to turn it on; unset, nothing is traced.
 *
 * Lines: `start` (an attempt began running in this process: its id, attempt, and how long after it
 * was scheduled), `end` (it returned or threw, with its heartbeats), `lag` (the event loop was
 * blocked for more than a second).
 */
import { appendFileSync } from 'node:fs';
import type { Context } from '@temporalio/activity';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';

/** The variable that names the trace file. */
export const ACTIVITY_TRACE_VARIABLE = 'REACT_AGENT_ACTIVITY_TRACE_FILE';

function writer(file: string): (event: Record<string, unknown>) => void {
  return (event) =>
    appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), pid: process.pid, ...event })}\n`);
}

/**
 * The activity interceptors that trace to `file`, and a watch on the event loop that reports
 * stalls; none when `file` is undefined.
 */
export function startActivityTrace(file: string | undefined): ActivityInterceptorsFactory[] {
  if (!file) return [];
  const write = writer(file);
  let expected = Date.now() + 250;
  setInterval(() => {
    const lateMs = Date.now() - expected;
    if (lateMs > 1000) write({ event: 'lag', lateMs });
    expected = Date.now() + 250;
  }, 250).unref();
  return [(context: Context) => ({ inbound: new TracingInbound(context, write) })];
}

class TracingInbound implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly context: Context,
    private readonly write: (event: Record<string, unknown>) => void,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { info } = this.context;
    const id = {
      workflowId: info.workflowExecution?.workflowId,
      activityId: info.activityId,
      type: info.activityType,
      attempt: info.attempt,
    };
    const startedAt = Date.now();
    const heartbeats: number[] = [];
    const send = this.context.heartbeat.bind(this.context);
    (this.context as { heartbeat: (details?: unknown) => void }).heartbeat = (details?: unknown) => {
      heartbeats.push(Date.now() - startedAt);
      send(details);
    };
    this.write({ event: 'start', ...id, sinceScheduledMs: startedAt - info.currentAttemptScheduledTimestampMs });
    let outcome = 'ok';
    try {
      return await next(input);
    } catch (error) {
      outcome = `error: ${(error as Error).message}`;
      throw error;
    } finally {
      this.write({
        event: 'end',
        ...id,
        ms: Date.now() - startedAt,
        outcome,
        heartbeats: heartbeats.length,
        lastHeartbeatMs: heartbeats.at(-1),
      });
    }
  }
}
