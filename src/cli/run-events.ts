import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type {
  CallModelInput,
  CallModelOutput,
  CompressContextInput,
  CompressContextOutput,
  LearnContextWindowOutput,
  ToolActivityInput,
  ToolActivityOutput,
} from '../core/activity-contracts';
import type { ResearchRunResult } from '../core/run-result';
import { activityRole } from './activity-roles';
import { SubRunEventReader, type SubRunEvent } from './sub-run-events';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

/** One step of a run as read from its workflow history. */
export type RunEvent =
  | { kind: 'model_call_started'; modelCall: number; finalAnswer: boolean }
  /**
   * `spent`: what the run's calls cost so far, this one included, and its cost budget
   * (`limits.maxCostUsd`) as the run started or was continued with, when the calls have a cost.
   */
  | {
      kind: 'model_call_completed';
      modelCall: number;
      output: CallModelOutput;
      spent?: { costUsd: number; maxCostUsd?: number };
    }
  | { kind: 'compression_started'; targetTokens: number; summarize: boolean }
  | { kind: 'context_compressed'; output: CompressContextOutput }
  /** The run asked the model server for its context window (once, at its start; in `startConversation` with light bookkeeping). */
  | { kind: 'context_window_learned'; output: LearnContextWindowOutput }
  | { kind: 'tool_started'; tool: string; input: ToolActivityInput }
  | { kind: 'tool_completed'; tool: string; callId: string; output: ToolActivityOutput }
  /** An activity this reader does not know, or whose result it cannot read, completed. */
  | { kind: 'activity_completed'; activity: string }
  | { kind: 'activity_failed'; activity: string; message: string }
  /** An activity was cancelled (the run is being cancelled, or it gave up waiting). */
  | { kind: 'activity_cancelled'; activity: string }
  | { kind: 'run_completed'; result: ResearchRunResult }
  | { kind: 'run_closed'; status: string }
  | { kind: 'continued_as_new'; newRunId: string }
  | SubRunEvent;

/** The first payload, decoded; undefined when there is none or it cannot be decoded (an unknown encoding, an encrypted payload). */
function decode(payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown {
  const first = payloads?.payloads?.[0];
  if (!first) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(first);
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function isCallModelInput(value: unknown): value is CallModelInput {
  return isRecord(value) && isNumber(value.modelCall);
}

function isCallModelOutput(value: unknown): value is CallModelOutput {
  return (
    isRecord(value) &&
    isNumber(value.contextTokens) &&
    isRecord(value.usage) &&
    isNumber(value.usage.completionTokens) &&
    isRecord(value.turn) &&
    Array.isArray(value.turn.toolCalls)
  );
}

function isCompressContextInput(value: unknown): value is CompressContextInput {
  return isRecord(value) && isNumber(value.targetTokens);
}

function isCompressContextOutput(value: unknown): value is CompressContextOutput {
  return (
    isRecord(value) &&
    isNumber(value.contextTokens) &&
    isNumber(value.stubbedObservations) &&
    isNumber(value.summarizedTurns)
  );
}

function isLearnContextWindowOutput(value: unknown): value is LearnContextWindowOutput {
  return (
    isRecord(value) &&
    isNumber(value.maxOutputTokens) &&
    (value.contextWindow === undefined || isNumber(value.contextWindow))
  );
}

function isToolActivityInput(value: unknown): value is ToolActivityInput {
  return isRecord(value) && typeof value.callId === 'string';
}

function isToolActivityOutput(value: unknown): value is ToolActivityOutput {
  return (
    isRecord(value) &&
    isRecord(value.observation) &&
    typeof value.observation.preview === 'string' &&
    isNumber(value.observation.characters)
  );
}

function isResearchRunResult(value: unknown): value is ResearchRunResult {
  return isRecord(value) && typeof value.termination === 'string' && typeof value.prediction === 'string';
}

/** The marker Temporal's Core records for a local activity's outcome (details `data`: its type and attempt; `result`). */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** A completed local activity's type and result, from its marker; undefined for any other marker or one this CLI cannot read. */
function localActivityOf(
  attributes: temporal.api.history.v1.IMarkerRecordedEventAttributes | null | undefined,
): { activity: string; result: unknown } | undefined {
  if (attributes?.markerName !== LOCAL_ACTIVITY_MARKER || attributes.failure) return undefined;
  const data = decode(attributes.details?.data);
  if (!isRecord(data) || typeof data.activity_type !== 'string') return undefined;
  return { activity: data.activity_type, result: decode(attributes.details?.result) };
}

/**
 * Turns a run's history into steps. Everything a reader wants is already in history: the
 * model's parsed turn and the previews the activities return, so this works live and after the
 * fact, from any machine, without the transcript store. It never throws on an event it does not
 * know: an activity that is neither the agent's own nor shaped like a tool becomes a generic
 * `activity_completed`, a child workflow's events are its sub-runs' ({@link SubRunEventReader}),
 * and any other event is skipped.
 */
export class RunEventReader {
  private readonly scheduled = new Map<string, { activity: string; input: unknown }>();
  /** What the run's calls cost so far (from a continued run's carried usage on), and its cost budget. */
  private costUsd: number | undefined;
  private maxCostUsd: number | undefined;
  private readonly subRuns = new SubRunEventReader();

  read(event: HistoryEvent): RunEvent[] {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
        // The input's budget (a continued run carries its state, with limits changed by setLimits and the usage so far).
        const input = decode(event.workflowExecutionStartedEventAttributes?.input);
        const resume = isRecord(input) && isRecord(input.resume) ? input.resume : undefined;
        const limits = isRecord(resume?.limits)
          ? resume.limits
          : isRecord(input) && isRecord(input.limits)
            ? input.limits
            : undefined;
        this.maxCostUsd = isNumber(limits?.maxCostUsd) && limits.maxCostUsd > 0 ? limits.maxCostUsd : undefined;
        this.costUsd = isRecord(resume?.usage) && isNumber(resume.usage.costUsd) ? resume.usage.costUsd : undefined;
        return [];
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attributes = event.activityTaskScheduledEventAttributes;
        const activity = attributes?.activityType?.name ?? '';
        const input = decode(attributes?.input);
        this.scheduled.set(String(event.eventId), { activity, input });
        return this.started(activity, input);
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attributes = event.activityTaskCompletedEventAttributes;
        const origin = this.scheduled.get(String(attributes?.scheduledEventId));
        if (!origin) return [];
        return this.completed(origin.activity, origin.input, decode(attributes?.result));
      }
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        // A run with light bookkeeping (issue 34) opens its transcript in a local activity, which
        // learns the context window too.
        const local = localActivityOf(event.markerRecordedEventAttributes);
        if (!local) return this.subRuns.read(event);
        const learned = isRecord(local.result) ? local.result.contextWindow : undefined;
        return local.activity === 'startConversation' && isLearnContextWindowOutput(learned)
          ? [{ kind: 'context_window_learned', output: learned }]
          : [];
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
        return [{ kind: 'activity_failed', activity: origin?.activity || 'activity', message }];
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const origin = this.scheduled.get(String(event.activityTaskCanceledEventAttributes?.scheduledEventId));
        if (!origin || activityRole(origin.activity) === 'bookkeeping') return [];
        return [{ kind: 'activity_cancelled', activity: origin.activity || 'activity' }];
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: {
        const result = decode(event.workflowExecutionCompletedEventAttributes?.result);
        return [
          isResearchRunResult(result)
            ? { kind: 'run_completed', result }
            : { kind: 'run_closed', status: 'completed, with a result this command cannot read' },
        ];
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
        return [
          {
            kind: 'continued_as_new',
            newRunId: event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? '',
          },
        ];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        return [
          {
            kind: 'run_closed',
            status: `failed: ${event.workflowExecutionFailedEventAttributes?.failure?.message ?? ''}`,
          },
        ];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        return [{ kind: 'run_closed', status: 'terminated' }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
        return [{ kind: 'run_closed', status: 'timed out' }];
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        return [{ kind: 'run_closed', status: 'cancelled' }];
      default:
        return this.subRuns.read(event);
    }
  }

  /** The cost so far once a call with a cost came back (and the budget, when there is one). */
  private spentAfter(output: CallModelOutput): { spent?: { costUsd: number; maxCostUsd?: number } } {
    if (isNumber(output.usage.costUsd)) this.costUsd = (this.costUsd ?? 0) + output.usage.costUsd;
    if (this.costUsd === undefined) return {};
    return {
      spent: { costUsd: this.costUsd, ...(this.maxCostUsd !== undefined ? { maxCostUsd: this.maxCostUsd } : {}) },
    };
  }

  private started(activity: string, input: unknown): RunEvent[] {
    switch (activityRole(activity)) {
      case 'model':
        return isCallModelInput(input)
          ? [{ kind: 'model_call_started', modelCall: input.modelCall, finalAnswer: Boolean(input.finalAnswer) }]
          : [];
      case 'compression':
        return isCompressContextInput(input)
          ? [{ kind: 'compression_started', targetTokens: input.targetTokens, summarize: Boolean(input.summarize) }]
          : [];
      case 'context-window':
      case 'bookkeeping':
        return [];
      case 'other':
        return isToolActivityInput(input) ? [{ kind: 'tool_started', tool: activity, input }] : [];
    }
  }

  private completed(activity: string, input: unknown, result: unknown): RunEvent[] {
    switch (activityRole(activity)) {
      case 'model':
        return isCallModelInput(input) && isCallModelOutput(result)
          ? [{ kind: 'model_call_completed', modelCall: input.modelCall, output: result, ...this.spentAfter(result) }]
          : [{ kind: 'activity_completed', activity }];
      case 'compression':
        return isCompressContextOutput(result)
          ? [{ kind: 'context_compressed', output: result }]
          : [{ kind: 'activity_completed', activity }];
      case 'context-window':
        return isLearnContextWindowOutput(result) ? [{ kind: 'context_window_learned', output: result }] : [];
      case 'bookkeeping':
        return [];
      case 'other':
        return isToolActivityOutput(result)
          ? [
              {
                kind: 'tool_completed',
                tool: activity,
                callId: isToolActivityInput(input) ? input.callId : '',
                output: result,
              },
            ]
          : [{ kind: 'activity_completed', activity: activity || 'activity' }];
    }
  }
}
