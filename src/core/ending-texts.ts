import type { ProtocolName } from './protocols';
import type { RunLimits } from './run-limits';
import { terminationOfBudgetEnd, type BudgetEnd, type Termination } from './termination';

/** Why a run is ending, for the texts the model and the transcript get: a termination, a budget end, or a request to finish now. */
export type EndingCause = Termination | BudgetEnd | 'finish';

/** The observation for a tool call the run answers without its result because it is ending. */
export function closingReason(why: EndingCause): string {
  switch (why) {
    case 'timeout':
      return 'Not completed: the run reached its time limit while this tool call was open.';
    case 'cancelled':
      return 'Not completed: the run was cancelled while this tool call was open.';
    case 'answer':
      return 'Not run: the final answer was given in the same reply.';
    case 'finish':
      return 'Not completed: the run was asked to finish now.';
    case 'max_calls':
    case 'token_limit':
    case 'cost_limit':
    case 'stuck':
    case 'error':
      return `Not run: the run ended (${why}).`;
    case 'truncated_replies':
    case 'malformed_replies':
      return `Not run: the run ended (${terminationOfBudgetEnd(why)}).`;
    default: {
      const unknown: never = why;
      throw new Error(`unknown ending cause ${String(unknown)}`);
    }
  }
}

/** Why the final answer phase asks for the answer now, in words for the model. */
export function finalAnswerReason(why: BudgetEnd | 'finish', finishReason: string): string {
  switch (why) {
    case 'token_limit':
      return 'You have reached the maximum context length you can handle.';
    case 'max_calls':
      return 'You have used all the model calls this research may make.';
    case 'timeout':
      return 'The time for this research is up.';
    case 'cost_limit':
      return 'The money this research may spend is used up.';
    case 'stuck':
      return 'The research is going in circles.';
    case 'truncated_replies':
      return 'Your replies keep getting cut off at the most tokens one reply may have, so keep this last one short.';
    case 'malformed_replies':
      return 'Your last replies could not be read.';
    case 'finish':
      return `You are asked to finish now${finishReason ? ` (${finishReason})` : ''}.`;
    default: {
      const unknown: never = why;
      throw new Error(`unknown ending cause ${String(unknown)}`);
    }
  }
}

/**
 * The result's `error` when a run with a cost budget got a model call back without a cost: the
 * worker that made the call has no price for the model, so the budget could never end the run.
 */
export function unpricedCostBudgetError(maxCostUsd: number, model: string): string {
  return (
    `The run has a cost budget (limits.maxCostUsd ${maxCostUsd} USD), but its model call came back without a cost: the worker has no price for the model "${model}", ` +
    'so the budget could never end the run and it stopped after that call. Give the workers a price for it (REACT_AGENT_MODEL_PRICES), or run without a cost budget.'
  );
}

/** The result's `error` when malformed replies ended the run. */
export function malformedRepliesError(count: number, protocol: ProtocolName): string {
  return (
    `The model's last ${count} replies in a row could not be read in the ${protocol} protocol (no answer and no tool call it could parse). ` +
    'Try another protocol (--protocol native, classic or deep-research), or a model that follows this one.'
  );
}

/** The prediction of a run that ended without an answer. */
export function noAnswerPrediction(termination: Termination, limits: RunLimits): string {
  switch (termination) {
    case 'cancelled':
      return 'No answer: the run was cancelled.';
    case 'timeout':
      return `No answer found after ${limits.maxDurationMinutes} minutes.`;
    case 'max_calls':
      return 'No answer found: the model-call budget ran out.';
    case 'cost_limit':
      return 'No answer found: the cost budget ran out.';
    case 'answer':
    case 'token_limit':
    case 'stuck':
    case 'error':
      return 'No answer found.';
    default: {
      const unknown: never = termination;
      throw new Error(`unknown termination ${String(unknown)}`);
    }
  }
}
