import type { ProtocolName } from '../src/protocols';
import type { RunLimits } from '../src/run-input';
import type { Termination } from '../src/termination';

/**
 * Why a run stopped looping without an answer of its own: a budget or limit ran out. Besides the
 * terminations, replies the loop could not use can end it: `truncated_replies` (cut off at the
 * output token limit `loop.maxTruncatedReplies` times in a row) and `malformed_replies`
 * (unreadable `loop.maxMalformedReplies` times in a row).
 */
export type BudgetEnd = Termination | 'truncated_replies' | 'malformed_replies';

/** Why a run is ending: a budget or limit, or someone asked it to finish now. */
export type EndingCause = BudgetEnd | 'finish';

/**
 * The termination a budget end is recorded as. Truncated replies end `token_limit` (a token
 * limit ran out: the one on a reply's length); malformed replies end `error` (the model does not
 * follow the protocol, which retrying does not fix; the result's `error` says so).
 */
export function terminationOfBudgetEnd(end: BudgetEnd): Termination {
  switch (end) {
    case 'truncated_replies':
      return 'token_limit';
    case 'malformed_replies':
      return 'error';
    case 'answer':
    case 'max_calls':
    case 'timeout':
    case 'token_limit':
    case 'cancelled':
    case 'stuck':
    case 'error':
      return end;
    default: {
      const unknown: never = end;
      throw new Error(`unknown budget end ${String(unknown)}`);
    }
  }
}

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
    case 'stuck':
    case 'error':
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
export function finalAnswerReason(why: EndingCause, finishReason: string): string {
  switch (why) {
    case 'token_limit':
      return 'You have reached the maximum context length you can handle.';
    case 'max_calls':
      return 'You have used all the model calls this research may make.';
    case 'timeout':
      return 'The time for this research is up.';
    case 'stuck':
      return 'The research is going in circles.';
    case 'truncated_replies':
      return 'Your replies keep getting cut off at the most tokens one reply may have, so keep this last one short.';
    case 'malformed_replies':
      return 'Your last replies could not be read.';
    case 'finish':
    case 'answer':
    case 'cancelled':
    case 'error':
      return `You are asked to finish now${finishReason ? ` (${finishReason})` : ''}.`;
    default: {
      const unknown: never = why;
      throw new Error(`unknown ending cause ${String(unknown)}`);
    }
  }
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
