import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * Activity retries in the given workflows' histories, by activity and cause: every
 * ActivityTaskStarted with attempt > 1 carries the failure of the attempt before it
 * (`lastFailure`): a timeout (heartbeat, start-to-close, …) or an application failure's type.
 */
export async function activityRetriesByCause(
  client: Client,
  workflowIds: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const workflowId of workflowIds) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const activityTypes = new Map<string, string>();
    for (const event of history.events ?? []) {
      if (event.activityTaskScheduledEventAttributes)
        activityTypes.set(String(event.eventId), event.activityTaskScheduledEventAttributes.activityType?.name ?? '?');
      const started = event.activityTaskStartedEventAttributes;
      if (!started || (started.attempt ?? 1) <= 1) continue;
      const failure = started.lastFailure;
      const timeout = failure?.timeoutFailureInfo?.timeoutType;
      const cause =
        timeout !== undefined && timeout !== null
          ? `${temporal.api.enums.v1.TimeoutType[timeout]?.replace('TIMEOUT_TYPE_', '').toLowerCase().replace(/_/g, '-')} timeout`
          : failure?.applicationFailureInfo?.type || (failure?.message ?? 'unknown').slice(0, 60);
      const key = `${activityTypes.get(String(started.scheduledEventId)) ?? '?'}: ${cause}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

export function formatRetries(counts: Map<string, number>): string {
  if (counts.size === 0) return 'activity retries: none';
  const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const width = Math.max(...rows.map(([key]) => key.length));
  return [
    "activity retries by cause (attempt > 1, from the previous attempt's failure):",
    ...rows.map(([key, count]) => `  ${key.padEnd(width)}  ${count}`),
  ].join('\n');
}
