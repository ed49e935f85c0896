import type { Context } from '@temporalio/activity';

/**
 * How an activity attempt that was cancelled ended, for a metric's `outcome` label: `timed_out`
 * when Temporal timed it out — the worker's own heartbeat or start-to-close timer fired (a handler
 * that stopped heartbeating, a blocked event loop), or the server no longer knew the attempt when
 * it heartbeated — and `cancelled` for a cancelled run or a worker shutting down; undefined when
 * the attempt was not cancelled.
 */
export function cancelledAttemptOutcome(context: Context): 'cancelled' | 'timed_out' | undefined {
  if (!context.cancellationSignal.aborted) return undefined;
  const details = context.cancellationDetails;
  if (details?.timedOut || (details?.notFound && !details.cancelRequested && !details.workerShutdown))
    return 'timed_out';
  return 'cancelled';
}
