import { Context } from '@temporalio/activity';

/**
 * Heartbeats, one way for every activity. Two kinds:
 *
 * - At a step, saying where the activity is (a chunk of a batch, a judged run, a compression):
 *   {@link heartbeat}.
 * - While the activity waits on something that says nothing for a while (a tool's handler, a model
 *   request before its first chunk): {@link keepHeartbeating}, every
 *   {@link heartbeatIntervalFor} the heartbeat timeout, so Temporal does not take the silence for
 *   a lost worker; a stalled request is the watchdog's to end (`model/stream-watchdog.ts`).
 *
 * Tools heartbeat through their `ToolControls.heartbeat`, which the tool activity wires to these.
 */

/** How often a waiting activity heartbeats at most: every few seconds, whatever the heartbeat timeout. */
export const MAX_HEARTBEAT_INTERVAL_MS = 5_000;

/** The heartbeat interval for a heartbeat timeout: a third of it, at most {@link MAX_HEARTBEAT_INTERVAL_MS}, at least 1 ms. */
export function heartbeatIntervalFor(heartbeatTimeoutMs: number): number {
  return Math.max(1, Math.min(MAX_HEARTBEAT_INTERVAL_MS, Math.floor(heartbeatTimeoutMs / 3)));
}

/**
 * Heartbeats once, at a step, with what says where the activity is (a lost attempt then shows
 * within the heartbeat timeout). A no-op in a local activity, which cannot heartbeat, and outside
 * an activity (a direct call in a test).
 */
export function heartbeat(details?: unknown): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not inside an activity
  }
  if (!context.info.isLocal) context.heartbeat(details);
}

/** Calls `send` every `intervalMs` until the function returned is called. */
export function keepHeartbeating(send: () => void, intervalMs: number): () => void {
  const ticker = setInterval(send, intervalMs);
  return () => clearInterval(ticker);
}
