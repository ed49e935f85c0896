import { validateRunInput } from './run-input';
import type { RunLimits } from './run-limits';
import type { RunState } from './run-state';
import { elapsedMs } from './run-budgets';

/**
 * What the run's message handlers check and say, as pure functions: each validator's problem
 * (undefined when the message is accepted) and the observation of a tool call that was not
 * approved. The handlers themselves are methods of `ResearchRun` (workflows/research-run.ts).
 */

/** A change of budgets while the run goes (update `setLimits`); each field is optional. */
export type LimitChanges = Partial<Pick<RunLimits, 'maxModelCalls' | 'maxDurationMinutes' | 'maxContextTokens' | 'maxTotalTokens' | 'maxCostUsd'>>;

/** The limits `setLimits` may change. */
export const CHANGEABLE_LIMITS = ['maxModelCalls', 'maxDurationMinutes', 'maxContextTokens', 'maxTotalTokens', 'maxCostUsd'] as const;

/** A decision on a tool call waiting for approval (update `approveToolCall`). */
export interface ApprovalDecision {
  callId: string;
  approved: boolean;
  /** Why, shown to the model when denied. */
  reason?: string;
  /** Who decided, for the record. */
  reviewer?: string;
}

export const MAX_INJECTED_MESSAGE_CHARACTERS = 20_000;

/** What refuses steering once the run is stopping or ending. */
export const RUN_ENDING_PROBLEM = 'the run is already ending';

export function injectedMessageProblem(message: { text?: unknown } | undefined): string | undefined {
  if (typeof message?.text !== 'string' || message.text.trim() === '') return 'text must be a non-empty string';
  if (message.text.length > MAX_INJECTED_MESSAGE_CHARACTERS) return `text is ${message.text.length} characters; the most is ${MAX_INJECTED_MESSAGE_CHARACTERS}`;
  return undefined;
}

/** Why a change of limits is refused: unknown or invalid limits, fewer calls than made, or no more time than used. */
export function limitChangesProblem(state: RunState, changes: LimitChanges | undefined, now: number): string | undefined {
  if (!changes || typeof changes !== 'object') return 'give the limits to change';
  const known: readonly string[] = CHANGEABLE_LIMITS;
  const unknown = Object.keys(changes).filter((key) => !known.includes(key));
  if (unknown.length) return `unknown limits: ${unknown.join(', ')} (known: ${known.join(', ')})`;
  const { problems } = validateRunInput({ question: 'x', limits: { ...state.limits, ...changes } });
  if (problems.length) return problems.join('; ');
  if (changes.maxModelCalls !== undefined && changes.maxModelCalls < state.modelCalls) {
    return `maxModelCalls ${changes.maxModelCalls} is below the ${state.modelCalls} calls already made`;
  }
  const used = elapsedMs(state, now);
  if (changes.maxDurationMinutes !== undefined && changes.maxDurationMinutes * 60_000 <= used) {
    return `maxDurationMinutes ${changes.maxDurationMinutes} is not more than the ${(used / 60_000).toFixed(1)} minutes already used`;
  }
  return undefined;
}

/** Why an approval decision is refused: its shape, or no such call waiting. */
export function approvalDecisionProblem(decision: ApprovalDecision | undefined, waiting: readonly string[]): string | undefined {
  if (!decision || typeof decision.callId !== 'string' || typeof decision.approved !== 'boolean') return 'give callId and approved';
  if (!waiting.includes(decision.callId)) {
    return `no tool call ${decision.callId} is waiting for approval${waiting.length ? ` (waiting: ${waiting.join(', ')})` : ''}`;
  }
  return undefined;
}

/** The observation of a call that needs approval: undefined when approved (it runs), else why it did not run. `decision` undefined: no one decided in time. */
export function approvalRefusal(tool: string, decision: ApprovalDecision | undefined, timeoutMinutes: number): string | undefined {
  if (!decision) return `Not run: no one approved this call of "${tool}" within ${timeoutMinutes} minutes.`;
  if (!decision.approved) return `Not run: the call of "${tool}" was denied${decision.reviewer ? ` by ${decision.reviewer}` : ''}${decision.reason ? `: ${decision.reason}` : '.'}`;
  return undefined;
}
