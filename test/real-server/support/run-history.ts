import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { CallModelOutput } from '../../../src/core/activity-contracts';

const EventType = temporal.api.enums.v1.EventType;

/** A completed or failed activity of a run, as its workflow history records it. */
export interface ActivityOutcome {
  /** Activity type: `callModel`, `compressContext`, a tool's name, ... */
  activity: string;
  /** The decoded result when it completed. */
  result?: unknown;
  /** The failure's message when it failed (after its retries). */
  failure?: string;
  /** The failure's `ApplicationFailure` type when it failed. */
  failureType?: string;
}

/**
 * The activities of a run in the order they ended, read from its workflow history: what the
 * Web UI and `react-agent follow` show of it (the parsed turns of model calls, the failures).
 */
export async function activityOutcomes(handle: WorkflowHandle): Promise<ActivityOutcome[]> {
  const history = await handle.fetchHistory();
  const scheduled = new Map<string, string>();
  const outcomes: ActivityOutcome[] = [];
  for (const event of history.events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      scheduled.set(String(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const attributes = event.activityTaskCompletedEventAttributes;
      const payload = attributes?.result?.payloads?.[0];
      outcomes.push({
        activity: scheduled.get(String(attributes?.scheduledEventId)) ?? '',
        ...(payload ? { result: defaultPayloadConverter.fromPayload(payload) } : {}),
      });
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED) {
      const attributes = event.activityTaskFailedEventAttributes;
      const failure = attributes?.failure;
      outcomes.push({
        activity: scheduled.get(String(attributes?.scheduledEventId)) ?? '',
        failure: failure?.message ?? '',
        failureType: failure?.applicationFailureInfo?.type ?? '',
      });
    }
  }
  return outcomes;
}

/** The results of a run's completed model calls, in order: each parsed turn, finish reason and usage. */
export async function modelCallOutputs(handle: WorkflowHandle): Promise<CallModelOutput[]> {
  return (await activityOutcomes(handle))
    .filter((outcome) => outcome.activity === 'callModel' && outcome.result !== undefined)
    .map((outcome) => outcome.result as CallModelOutput);
}
