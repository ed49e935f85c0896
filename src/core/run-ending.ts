import { noAnswerPrediction } from './ending-texts';
import type { RunLimits } from './run-limits';
import { terminationOfBudgetEnd, type BudgetEnd, type Termination } from './termination';
import type { Turn } from './turns';

/**
 * How a research run ends, as a small state machine: each phase returns an {@link Ending} that
 * carries everything the run ended with, and {@link concludeRun} is the one place an ending
 * becomes the run's termination and prediction. Pure and workflow-safe.
 */

/** An answer the model gave: its text, and the value parsed from it when it matched the answer schema. */
export interface GivenAnswer {
  text: string;
  parsed?: unknown;
}

/**
 * What an ending carries besides why the run ended: the last answer the model gave (the
 * prediction of a budget end, a finish request or a cancellation; an answer that ended the run is
 * its ending's own), the error so far, and the tool calls left open — with the results of those
 * that finished — which are answered with why the run ended.
 */
export interface EndingRecord {
  lastAnswer?: GivenAnswer;
  error?: string;
  openTurn?: Turn;
}

/** Why a phase stopped the run (or this run of a continued workflow), with what it ended with. */
export type Ending = EndingKind & EndingRecord;

type EndingKind =
  /** The model answered (and the answer matched the schema, if there is one). */
  | { kind: 'answered'; answer: GivenAnswer }
  /** A budget or reply limit ran out: which one. */
  | { kind: 'budget_ended'; budget: BudgetEnd }
  /** Someone asked the run to finish now (update `finishNow`), with their reason. */
  | { kind: 'finish_requested'; reason: string }
  /** The run was cancelled through Temporal (or while its final answer call ran). */
  | { kind: 'cancelled' }
  /** Something retrying cannot fix; `answer` is the last answer when it was the answer that failed (its schema). */
  | { kind: 'failed'; message: string; answer?: string }
  /** The history is long: the run goes on as a new run of the same workflow. */
  | { kind: 'continue_as_new' };

/** An ending the run concludes with (continue-as-new concludes nothing: the next run goes on). */
export type FinalEnding = Exclude<Ending, { kind: 'continue_as_new' }>;

/** A request from outside the loop to stop it: the deadline timer, or `finishNow`. */
export type StopRequest = { kind: 'timeout' } | { kind: 'finish'; reason: string };

/** The first stop request stands: a later one does not change why the run is stopping. */
export function requestStop(current: StopRequest | undefined, incoming: StopRequest): StopRequest {
  return current ?? incoming;
}

/** The record's fields that are set (an ending never holds an undefined one). */
export function recordOf({ lastAnswer, error, openTurn }: EndingRecord): EndingRecord {
  return {
    ...(lastAnswer ? { lastAnswer } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(openTurn ? { openTurn } : {}),
  };
}

/** The ending with what the run holds besides it (the answer it was given last, the turn in progress); what the ending carries itself stands. */
export function withRecord(ending: Ending, record: EndingRecord): Ending {
  return { ...recordOf(record), ...ending };
}

/** The ending a stop request leads to: the time budget ran out, or the run was asked to finish. */
export function stopEnding(stop: StopRequest): Ending {
  switch (stop.kind) {
    case 'timeout':
      return { kind: 'budget_ended', budget: 'timeout' };
    case 'finish':
      return { kind: 'finish_requested', reason: stop.reason };
    default: {
      const unknown: never = stop;
      throw new Error(`unknown stop request ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Why the ReAct loop ended, from how it ended (`cancelled` when its scope was cancelled) and the
 * stop request, if one came. An answer or a failure of the loop's own stands; otherwise a stop
 * request wins: it is why the loop's scope was cancelled, and it outranks a budget end or a
 * continue-as-new reached at the same moment, and takes what that ending carried (its error, the
 * last answer, the open calls). A cancellation without a stop request is the run's.
 */
export function endingAfterLoop(loop: Ending, stop: StopRequest | undefined): Ending {
  switch (loop.kind) {
    case 'answered':
    case 'failed':
      return loop;
    case 'budget_ended':
    case 'finish_requested':
    case 'cancelled':
    case 'continue_as_new':
      return stop ? { ...stopEnding(stop), ...recordOf(loop) } : loop;
    default: {
      const unknown: never = loop;
      throw new Error(`unknown ending ${JSON.stringify(unknown)}`);
    }
  }
}

/** Whether an ending goes through the final answer phase, and why: a finish request always, a budget end when the phase is on. */
export function finalAnswerCause(ending: Ending, finalAnswerPhase: boolean): BudgetEnd | 'finish' | undefined {
  if (ending.kind === 'finish_requested') return 'finish';
  if (ending.kind === 'budget_ended' && finalAnswerPhase) return ending.budget;
  return undefined;
}

/**
 * How the final answer phase's calls went; when called, what the last reply gave: its answer, the
 * error when that answer failed its schema, and its tool calls (not run).
 */
export type FinalAnswerCalls =
  ({ kind: 'called' } & EndingRecord) | { kind: 'cancelled' } | { kind: 'failed'; message: string };

/**
 * The ending after the final answer phase. The calls the loop left open were answered in its
 * prompt, so the ending no longer carries them. Called: what the last reply gave stands (its
 * answer, the error of a schema it failed, the calls it left open), else what the ending carried.
 * A cancellation during the last call cancels the run, keeping the answer and error so far; a
 * failure of the last call keeps the ending and joins the error so far.
 */
export function endingAfterFinalAnswer(ending: FinalEnding, calls: FinalAnswerCalls): FinalEnding {
  const answered = withoutOpenTurn(ending);
  switch (calls.kind) {
    case 'called':
      return { ...answered, ...recordOf(calls) };
    case 'cancelled':
      return { kind: 'cancelled', ...recordOf({ lastAnswer: ending.lastAnswer, error: ending.error }) };
    case 'failed':
      return {
        ...answered,
        error: ending.error ? `${ending.error} The final answer call failed: ${calls.message}` : calls.message,
      };
    default: {
      const unknown: never = calls;
      throw new Error(`unknown final answer outcome ${JSON.stringify(unknown)}`);
    }
  }
}

function withoutOpenTurn(ending: FinalEnding): FinalEnding {
  if (!ending.openTurn) return ending;
  const answered = { ...ending };
  delete answered.openTurn;
  return answered;
}

/** How the run ended, for its result and search attributes. */
export interface Conclusion {
  termination: Termination;
  prediction: string;
  error?: string;
  parsedAnswer?: unknown;
}

/**
 * The termination and prediction of an ending. An answer ends `answer`; a failure `error`, its
 * prediction the failed answer or what went wrong; a budget end its budget's termination; a
 * finish request `answer` when the final answer call gave one, else `cancelled`; a cancellation
 * `cancelled`. Without an answer the prediction says why there is none: `noAnswer` when the run
 * knows better than its termination says (the final answer call did not fit).
 */
export function concludeRun(ending: FinalEnding, limits: RunLimits, noAnswer?: string): Conclusion {
  const withLastAnswer = (termination: Termination): Conclusion => ({
    termination,
    prediction: ending.lastAnswer?.text || noAnswer || noAnswerPrediction(termination, limits),
    ...(ending.error ? { error: ending.error } : {}),
    ...(ending.lastAnswer?.parsed !== undefined ? { parsedAnswer: ending.lastAnswer.parsed } : {}),
  });
  switch (ending.kind) {
    case 'answered':
      return {
        termination: 'answer',
        prediction: ending.answer.text || noAnswerPrediction('answer', limits),
        ...(ending.error ? { error: ending.error } : {}),
        ...(ending.answer.parsed !== undefined ? { parsedAnswer: ending.answer.parsed } : {}),
      };
    case 'failed':
      return {
        termination: 'error',
        prediction:
          ending.answer === undefined
            ? `No answer: ${ending.message}`
            : ending.answer || noAnswerPrediction('error', limits),
        error: ending.message,
      };
    case 'budget_ended':
      return withLastAnswer(terminationOfBudgetEnd(ending.budget));
    case 'finish_requested':
      return withLastAnswer(ending.lastAnswer?.text ? 'answer' : 'cancelled');
    case 'cancelled':
      return withLastAnswer('cancelled');
    default: {
      const unknown: never = ending;
      throw new Error(`unknown ending ${JSON.stringify(unknown)}`);
    }
  }
}

/** The conclusion when the last messages could not be stored: the error says so, after what went wrong before. */
export function afterStoreFailure(conclusion: Conclusion, message: string): Conclusion {
  return {
    ...conclusion,
    error: `${conclusion.error ? `${conclusion.error}; ` : ''}the last messages could not be stored: ${message}`,
  };
}
