import type { RunLimits } from '../src/run-input';
import type { Termination } from '../src/termination';

/** Why a run is ending: a termination, or someone asked it to finish now. */
export type EndingCause = Termination | 'finish';

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
    default:
      return `Not run: the run ended (${why}).`;
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
    default:
      return `You are asked to finish now${finishReason ? ` (${finishReason})` : ''}.`;
  }
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
    default:
      return 'No answer found.';
  }
}
