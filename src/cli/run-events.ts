import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { CallModelInput, CallModelOutput, ToolActivityInput, ToolActivityOutput } from '../core/activity-contracts';
import type { ResearchRunResult } from '../core/run-result';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/** One step of a run as read from its workflow history. */
export type RunEvent =
  | { kind: 'model_call_started'; modelCall: number; finalAnswer: boolean }
  | { kind: 'model_call_completed'; modelCall: number; output: CallModelOutput }
  | { kind: 'tool_started'; tool: string; input: ToolActivityInput }
  | { kind: 'tool_completed'; tool: string; callId: string; output: ToolActivityOutput }
  | { kind: 'activity_failed'; activity: string; message: string }
  | { kind: 'run_completed'; result: ResearchRunResult }
  | { kind: 'run_closed'; status: string }
  | { kind: 'continued_as_new'; newRunId: string };

function decode<T>(payloads: temporal.api.common.v1.IPayloads | null | undefined): T | undefined {
  const first = payloads?.payloads?.[0];
  return first ? (defaultPayloadConverter.fromPayload(first) as T) : undefined;
}

const AGENT_ACTIVITIES = new Set(['startConversation', 'finishTranscript']);

/**
 * Turns a run's history into steps. Everything a reader wants is already in history: the
 * model's parsed turn and the previews the activities return, so this works live and after the
 * fact, from any machine, without the transcript store.
 */
export class RunEventReader {
  private readonly scheduled = new Map<string, { activity: string; input: unknown }>();

  read(event: HistoryEvent): RunEvent[] {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attributes = event.activityTaskScheduledEventAttributes;
        const activity = attributes?.activityType?.name ?? '';
        const input = decode<unknown>(attributes?.input);
        this.scheduled.set(String(event.eventId), { activity, input });
        if (activity === 'callModel') {
          const modelInput = input as CallModelInput;
          return [{ kind: 'model_call_started', modelCall: modelInput.modelCall, finalAnswer: Boolean(modelInput.finalAnswer) }];
        }
        if (AGENT_ACTIVITIES.has(activity)) return [];
        return [{ kind: 'tool_started', tool: activity, input: input as ToolActivityInput }];
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attributes = event.activityTaskCompletedEventAttributes;
        const origin = this.scheduled.get(String(attributes?.scheduledEventId));
        if (!origin) return [];
        if (origin.activity === 'callModel') {
          return [{ kind: 'model_call_completed', modelCall: (origin.input as CallModelInput).modelCall, output: decode<CallModelOutput>(attributes?.result) as CallModelOutput }];
        }
        if (AGENT_ACTIVITIES.has(origin.activity)) return [];
        return [{ kind: 'tool_completed', tool: origin.activity, callId: (origin.input as ToolActivityInput).callId, output: decode<ToolActivityOutput>(attributes?.result) as ToolActivityOutput }];
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attributes = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
        const origin = this.scheduled.get(String(attributes?.scheduledEventId));
        let failure = attributes?.failure;
        let message = failure?.message ?? 'failed';
        while (failure?.cause) {
          failure = failure.cause;
          if (failure.applicationFailureInfo && failure.message) message = failure.message;
        }
        return [{ kind: 'activity_failed', activity: origin?.activity ?? 'activity', message }];
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
        return [{ kind: 'run_completed', result: decode<ResearchRunResult>(event.workflowExecutionCompletedEventAttributes?.result) as ResearchRunResult }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
        return [{ kind: 'continued_as_new', newRunId: event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? '' }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        return [{ kind: 'run_closed', status: `failed: ${event.workflowExecutionFailedEventAttributes?.failure?.message ?? ''}` }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        return [{ kind: 'run_closed', status: 'terminated' }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
        return [{ kind: 'run_closed', status: 'timed out' }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        return [{ kind: 'run_closed', status: 'cancelled' }];
      default:
        return [];
    }
  }
}

/** Streams a run's history events as they are written (long polls), until the run closes. */
export async function* runHistory(client: Client, workflowId: string, runId?: string): AsyncGenerator<HistoryEvent> {
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      waitNewEvent: true,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const event of response.history?.events ?? []) yield event;
    if (!response.nextPageToken || response.nextPageToken.length === 0) return;
    nextPageToken = response.nextPageToken;
  }
}
