import { validateRunInput } from './run-input';
import type { RunLimits } from './run-limits';
import type { RunState } from './run-state';
import { elapsedMs } from './run-budgets';
import { shortened } from './text';

/**
 * What the run's message handlers check and say, as pure functions: each validator's problem
 * (undefined when the message is accepted) and the observation of a tool call that was not
 * approved. The handlers themselves are methods of `ResearchRun` (workflows/research-run.ts).
 */

/** A change of budgets while the run goes (update `setLimits`); each field is optional. */
export type LimitChanges = Partial<
  Pick<RunLimits, 'maxModelCalls' | 'maxDurationMinutes' | 'maxContextTokens' | 'maxTotalTokens' | 'maxCostUsd'>
>;

/** The limits `setLimits` may change. */
export const CHANGEABLE_LIMITS = [
  'maxModelCalls',
  'maxDurationMinutes',
  'maxContextTokens',
  'maxTotalTokens',
  'maxCostUsd',
] as const;

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

/**
 * The most characters of injected messages that may wait for the run's next model call (the sum
 * over every `injectMessage` accepted since the last one): three messages of the longest kind.
 * What waits goes into that call's activity input, and Temporal refuses a payload over 2 MB, which
 * would fail every workflow task of the run; at 60,000 characters the waiting text is at most
 * 360 KB even with every character JSON-escaped to six bytes. Past it, `injectMessage` is refused
 * until the next model call takes what waits.
 */
export const MAX_PENDING_INJECTED_CHARACTERS = 60_000;

/** The longest `callId` an `approveToolCall` may name (ids are the model's or `call-<n>-<i>`). */
export const MAX_CALL_ID_CHARACTERS = 200;

/** The longest free text a steering update carries: `finishNow`'s and `approveToolCall`'s `reason`, and `reviewer`. */
export const MAX_STEERING_NOTE_CHARACTERS = 2_000;

/** What refuses steering once the run is stopping or ending. */
export const RUN_ENDING_PROBLEM = 'the run is already ending';

/** Why an update's argument is refused: not an object, or a field the update does not know (named shortly). */
function argumentProblem(argument: unknown, known: readonly string[]): string | undefined {
  if (typeof argument !== 'object' || argument === null || Array.isArray(argument))
    return `give an object with ${known.join(', ')}`;
  const unknown = Object.keys(argument).filter((key) => !known.includes(key));
  if (!unknown.length) return undefined;
  const named = unknown.slice(0, 3).map((key) => shortened(key));
  return `unknown field${unknown.length > 1 ? 's' : ''}: ${named.join(', ')}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''} (known: ${known.join(', ')})`;
}

/** Why an optional free-text field is refused (absent or null is fine): not a string, or longer than {@link MAX_STEERING_NOTE_CHARACTERS}. */
function noteProblem(name: string, value: unknown): string | undefined {
  // JSON's null is absent too (the Python sample sends `"reason": None`).
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return `${name} must be a string`;
  if (value.length > MAX_STEERING_NOTE_CHARACTERS)
    return `${name} is ${value.length} characters; the most is ${MAX_STEERING_NOTE_CHARACTERS}`;
  return undefined;
}

/**
 * Why an injected message is refused: its shape, its length, or no room left beside the
 * `waitingCharacters` already injected for the next model call ({@link MAX_PENDING_INJECTED_CHARACTERS}).
 */
export function injectedMessageProblem(
  message: { text?: unknown } | undefined,
  waitingCharacters = 0,
): string | undefined {
  if (typeof message?.text !== 'string' || message.text.trim() === '') return 'text must be a non-empty string';
  if (message.text.length > MAX_INJECTED_MESSAGE_CHARACTERS)
    return `text is ${message.text.length} characters; the most is ${MAX_INJECTED_MESSAGE_CHARACTERS}`;
  const fields = argumentProblem(message, ['text']);
  if (fields) return fields;
  if (waitingCharacters + message.text.length > MAX_PENDING_INJECTED_CHARACTERS) {
    return (
      `${waitingCharacters} characters of injected messages already wait for the next model call; with these ${message.text.length} ` +
      `they would pass the most, ${MAX_PENDING_INJECTED_CHARACTERS}. Send it again once the next model call has taken them`
    );
  }
  return undefined;
}

/** Why a `finishNow` request is refused for its content (`reason` optional, a short string). */
export function finishRequestProblem(request: { reason?: unknown } | undefined): string | undefined {
  if (request === undefined || request === null) return undefined;
  return argumentProblem(request, ['reason']) ?? noteProblem('reason', request.reason);
}

/** Why a change of limits is refused: unknown or invalid limits, fewer calls than made, or no more time than used. */
export function limitChangesProblem(
  state: RunState,
  changes: LimitChanges | undefined,
  now: number,
): string | undefined {
  if (!changes || typeof changes !== 'object') return 'give the limits to change';
  const known: readonly string[] = CHANGEABLE_LIMITS;
  const unknown = Object.keys(changes).filter((key) => !known.includes(key));
  if (unknown.length) {
    const named = unknown.slice(0, 3).map((key) => shortened(key));
    return `unknown limits: ${named.join(', ')}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''} (known: ${known.join(', ')})`;
  }
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

/** Why an approval decision is refused: its shape, a field too long, or no such call waiting; ids are quoted shortened. */
export function approvalDecisionProblem(
  decision: ApprovalDecision | undefined,
  waiting: readonly string[],
): string | undefined {
  if (!decision || typeof decision.callId !== 'string' || typeof decision.approved !== 'boolean')
    return 'give callId and approved';
  if (decision.callId.length > MAX_CALL_ID_CHARACTERS)
    return `callId is ${decision.callId.length} characters; the most is ${MAX_CALL_ID_CHARACTERS}`;
  const shape =
    argumentProblem(decision, ['callId', 'approved', 'reason', 'reviewer']) ??
    noteProblem('reason', decision.reason) ??
    noteProblem('reviewer', decision.reviewer);
  if (shape) return shape;
  if (!waiting.includes(decision.callId)) {
    const listed = waiting.slice(0, 5).map((id) => shortened(id));
    return `no tool call ${shortened(decision.callId)} is waiting for approval${waiting.length ? ` (waiting: ${listed.join(', ')}${waiting.length > 5 ? ` and ${waiting.length - 5} more` : ''})` : ''}`;
  }
  return undefined;
}

/** The observation of a call that needs approval: undefined when approved (it runs), else why it did not run. `decision` undefined: no one decided in time. */
export function approvalRefusal(
  tool: string,
  decision: ApprovalDecision | undefined,
  timeoutMinutes: number,
): string | undefined {
  if (!decision) return `Not run: no one approved this call of "${tool}" within ${timeoutMinutes} minutes.`;
  if (!decision.approved)
    return `Not run: the call of "${tool}" was denied${decision.reviewer ? ` by ${decision.reviewer}` : ''}${decision.reason ? `: ${decision.reason}` : '.'}`;
  return undefined;
}
