import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/**
 * A run's sub-runs (issue 30) as its own history tells of them: each child `researchAgent` the
 * run started (with its task's question), could not start, or saw close. `follow` follows each
 * started one's history too.
 */
export type SubRunEvent =
  | { kind: 'sub_run_started'; workflowId: string; question: string }
  | { kind: 'sub_run_not_started'; workflowId: string; cause: string }
  /** `status`: completed, failed, cancelled, timed out or terminated (its own history has how it ended). */
  | { kind: 'sub_run_closed'; workflowId: string; status: string };

/** The `question` of a child's input, or ''. */
function questionOf(payloads: temporal.api.common.v1.IPayloads | null | undefined): string {
  const first = payloads?.payloads?.[0];
  if (!first) return '';
  try {
    const input = defaultPayloadConverter.fromPayload<unknown>(first);
    return typeof input === 'object' && input !== null && typeof (input as { question?: unknown }).question === 'string'
      ? (input as { question: string }).question
      : '';
  } catch {
    return '';
  }
}

const CLOSED: ReadonlyMap<temporal.api.enums.v1.EventType, string> = new Map([
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED, 'completed'],
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED, 'failed'],
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED, 'cancelled'],
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT, 'timed out'],
  [EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED, 'terminated'],
]);

/** The child workflow id of a child close event, whichever kind it is. */
function closedChildId(event: HistoryEvent): string | undefined {
  const attributes =
    event.childWorkflowExecutionCompletedEventAttributes ??
    event.childWorkflowExecutionFailedEventAttributes ??
    event.childWorkflowExecutionCanceledEventAttributes ??
    event.childWorkflowExecutionTimedOutEventAttributes ??
    event.childWorkflowExecutionTerminatedEventAttributes;
  return attributes?.workflowExecution?.workflowId ?? undefined;
}

/** Reads a run's child workflow events into {@link SubRunEvent}s; every other event is none. */
export class SubRunEventReader {
  /** Questions of the children asked for, by their initiated event's id. */
  private readonly questions = new Map<string, string>();

  read(event: HistoryEvent): SubRunEvent[] {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        this.questions.set(
          String(event.eventId),
          questionOf(event.startChildWorkflowExecutionInitiatedEventAttributes?.input),
        );
        return [];
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
        const attributes = event.childWorkflowExecutionStartedEventAttributes;
        const workflowId = attributes?.workflowExecution?.workflowId;
        if (!workflowId) return [];
        const question = this.questions.get(String(attributes?.initiatedEventId)) ?? '';
        return [{ kind: 'sub_run_started', workflowId, question }];
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED: {
        const attributes = event.startChildWorkflowExecutionFailedEventAttributes;
        const cause = temporal.api.enums.v1.StartChildWorkflowExecutionFailedCause[attributes?.cause ?? 0] ?? 'unknown';
        return [
          {
            kind: 'sub_run_not_started',
            workflowId: attributes?.workflowId ?? '',
            cause: cause.replace(/^START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_/, '').toLowerCase(),
          },
        ];
      }
      default: {
        const status = event.eventType ? CLOSED.get(event.eventType) : undefined;
        const workflowId = status ? closedChildId(event) : undefined;
        return status && workflowId ? [{ kind: 'sub_run_closed', workflowId, status }] : [];
      }
    }
  }
}

/** Whether a run's step is one of its sub-runs' ({@link SubRunEvent}). */
export function isSubRunEvent(event: { kind: string }): event is SubRunEvent {
  return event.kind === 'sub_run_started' || event.kind === 'sub_run_not_started' || event.kind === 'sub_run_closed';
}
