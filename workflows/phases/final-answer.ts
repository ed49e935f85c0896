import { CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import { FINAL_ANSWER_RETRIES_WHEN_TRUNCATED } from '../../src/core/protocols';
import { checkAnswer, readFinalReply } from '../../src/core/reply-steps';
import { endingAfterFinalAnswer, finalAnswerCause, type FinalAnswerCalls, type FinalEnding } from '../../src/core/run-ending';
import { appendPendingText } from '../../src/core/pending';
import { applyModelReply, askForFinalAnswer } from '../../src/core/run-transitions';
import { rootMessage } from '../failures';
import { LoopPatches } from '../patches';
import type { ResearchRun } from '../research-run';

/**
 * The final answer phase: when a budget ran out (and `loop.finalAnswerPhase` is on) or someone
 * asked the run to finish, one last tool-less call asks for the best answer from what is known
 * (asked once more when that answer is cut off). Returns the ending the run concludes with:
 * the same one, or `cancelled` when the run was cancelled during the call.
 */
export async function finalAnswer(run: ResearchRun, ending: FinalEnding): Promise<FinalEnding> {
  const why = finalAnswerCause(ending, run.options.finalAnswerPhase);
  if (why === undefined) return ending;
  run.close();
  run.disarmDeadline();
  const finishReason = ending.kind === 'finish_requested' ? ending.reason : '';
  run.state = askForFinalAnswer(run.state, why, run.takeOpenTurn(), { protocol: run.protocol, finishReason, injected: run.takeInjected() });
  const after = endingAfterFinalAnswer(ending, await finalAnswerCalls(run), run.error);
  run.error = after.error;
  return after.ending;
}

async function finalAnswerCalls(run: ResearchRun): Promise<FinalAnswerCalls> {
  try {
    let retriesLeft = FINAL_ANSWER_RETRIES_WHEN_TRUNCATED;
    while (await callForFinalAnswer(run, retriesLeft)) retriesLeft -= 1;
    return { kind: 'called' };
  } catch (error) {
    return isCancellation(error) ? { kind: 'cancelled' } : { kind: 'failed', message: rootMessage(error) };
  }
}

/** One call of the final answer phase; true when its answer was cut off and is asked for again. */
async function callForFinalAnswer(run: ResearchRun, retriesLeft: number): Promise<boolean> {
  const outcome = await CancellationScope.cancellable(() => run.callModel(true));
  run.state = applyModelReply(run.state, outcome, () => patched(LoopPatches.calibratedTokenEstimates));
  const read = readFinalReply(run.state, outcome, run.protocol, retriesLeft, () => patched(LoopPatches.unusableReplies));
  run.state = read.state;
  switch (read.step.kind) {
    case 'ask_again':
      return true;
    case 'take':
      if (read.step.openCalls.length) run.turn = { calls: read.step.openCalls, results: new Map() };
      if (read.step.answer !== undefined) takeFinalAnswer(run, read.step.answer);
      return false;
    default: {
      const unknown: never = read.step;
      throw new Error(`unknown final reply step ${JSON.stringify(unknown)}`);
    }
  }
}

/** The final answer becomes the run's; against a schema it may fail (the error says why) or get a correction no call follows. */
function takeFinalAnswer(run: ResearchRun, answer: string): void {
  const checked = checkAnswer(run.state, answer, run.input.answerSchema, run.options.answerAttempts);
  run.state = checked.state;
  run.given = checked.given;
  switch (checked.check.kind) {
    case 'accepted':
      return;
    case 'failed':
      run.error = checked.check.message;
      return;
    case 'retry':
      run.state = appendPendingText(run.state, checked.check.correction);
      return;
    default: {
      const unknown: never = checked.check;
      throw new Error(`unknown answer check ${JSON.stringify(unknown)}`);
    }
  }
}
