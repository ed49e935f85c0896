import { CancellationScope, isCancellation } from '@temporalio/workflow';
import {
  finalAnswerCompressionTarget,
  finalAnswerDidNotFit,
  finalAnswerFits,
  finalAnswerFitSteps,
  learnedFromOverflow,
  withConversationOf,
  withSummaryLimits,
  type FinalAnswerFitStep,
} from '../../src/core/context-window';
import { FailureTypes } from '../../src/core/failure-types';
import { FINAL_ANSWER_RETRIES_WHEN_TRUNCATED } from '../../src/core/protocols';
import { checkAnswer, isCutOffFinalReply, readFinalReply } from '../../src/core/reply-steps';
import {
  endingAfterFinalAnswer,
  finalAnswerCause,
  type EndingRecord,
  type FinalAnswerCalls,
  type FinalEnding,
} from '../../src/core/run-ending';
import { appendPendingText } from '../../src/core/pending';
import type { RunState } from '../../src/core/run-state';
import { unansweredTurn } from '../../src/core/turns';
import {
  applyCompression,
  applyModelReply,
  finalAnswerRequest,
  hasPromptEstimate,
  prepareFinalAnswer,
} from '../../src/core/run-transitions';
import { runActivities } from '../activity-proxies';
import { failureType, rootMessage } from '../failures';
import { LoopPatches } from '../patches';
import { patchedOrLight } from '../light-bookkeeping';
import { callModel } from '../model-call';
import type { ResearchRun } from '../research-run';

/**
 * The final answer phase: when a budget ran out (and `loop.finalAnswerPhase` is on) or someone
 * asked the run to finish, one last tool-less call asks for the best answer from what is known
 * (asked once more when that answer is cut off). Its prompt is compressed first when it does not
 * fit the context budget (harder when the server refuses it as too long); when not even the
 * question alone fits, no call is made. Returns the ending the run concludes with: the same one
 * with what the call gave (its answer, a schema's error, the calls it made), or `cancelled` when
 * the run was cancelled during the call.
 */
export async function finalAnswer(run: ResearchRun, ending: FinalEnding): Promise<FinalEnding> {
  const why = finalAnswerCause(ending, run.options.finalAnswerPhase);
  if (why === undefined) return ending;
  return run.leaveLoop(async () => {
    const finishReason = ending.kind === 'finish_requested' ? ending.reason : '';
    const prepared = prepareFinalAnswer(run.state, why, ending.openTurn, {
      protocol: run.protocol,
      injected: run.takeInjected(),
    });
    const request = finalAnswerRequest(why, run.protocol, finishReason);
    run.state = appendPendingText(prepared, request);
    return endingAfterFinalAnswer(ending, await finalAnswerCalls(run, { prepared, request }));
  });
}

/** The final answer call's prompt before any compression: the state without the request, and the request. */
interface FinalPrompt {
  prepared: RunState;
  request: string;
}

async function finalAnswerCalls(run: ResearchRun, prompt: FinalPrompt): Promise<FinalAnswerCalls> {
  try {
    // Runs from before the marker call as they are; a prompt that fits (by our estimate) is not compressed.
    let steps = patchedOrLight(LoopPatches.finalAnswerFits) ? finalAnswerFitSteps(run.options) : [];
    if (steps.length && !finalAnswerFits(run.state)) {
      const left = await fitFinalAnswer(run, prompt, steps);
      if (left === undefined) return { kind: 'called' };
      steps = left;
    }
    let retriesLeft = FINAL_ANSWER_RETRIES_WHEN_TRUNCATED;
    for (;;) {
      try {
        for (;;) {
          const taken = await callForFinalAnswer(run, retriesLeft);
          if (taken) return { kind: 'called', ...taken };
          retriesLeft -= 1;
        }
      } catch (error) {
        // The server refused the prompt as too long after all: the window it names, and harder compression.
        if (!steps.length || isCancellation(error) || failureType(error) !== FailureTypes.modelContextLengthExceeded)
          throw error;
        run.state = learnedFromOverflow(run.state, rootMessage(error));
        const left = await fitFinalAnswer(run, prompt, steps);
        if (left === undefined) return { kind: 'called' };
        steps = left;
      }
    }
  } catch (error) {
    return isCancellation(error) ? { kind: 'cancelled' } : { kind: 'failed', message: rootMessage(error) };
  }
}

/**
 * Compresses the final answer call's prompt, each step harder (src/core/context-window.ts
 * `finalAnswerFitSteps`), until it fits the context budget. Returns the steps not taken yet, or
 * undefined when not even the question alone fits: then no call is made and the state says why.
 */
async function fitFinalAnswer(
  run: ResearchRun,
  prompt: FinalPrompt,
  steps: FinalAnswerFitStep[],
): Promise<FinalAnswerFitStep[] | undefined> {
  for (const [index, step] of steps.entries()) {
    run.enter('compressing');
    const base = withConversationOf(run.state, prompt.prepared);
    const compressed = await runActivities.compressContext({
      workflowId: run.workflowId,
      conversation: base.conversation,
      append: base.pending,
      protocol: run.protocol.name,
      question: run.input.question,
      keepRecentTurns: step.keepRecentTurns,
      targetTokens: finalAnswerCompressionTarget(base),
      summarize: step.summarize,
      model: run.modelOptions(),
      finalAnswer: { request: prompt.request, ...(step.dropTurns ? { dropTurns: true } : {}) },
      ...withSummaryLimits(base),
    });
    run.state = applyCompression(base, compressed);
    if (finalAnswerFits(run.state)) return steps.slice(index + 1);
  }
  run.state = finalAnswerDidNotFit(run.state);
  return undefined;
}

/** One call of the final answer phase: what its reply gave, or undefined when its answer was cut off and is asked for again. */
async function callForFinalAnswer(run: ResearchRun, retriesLeft: number): Promise<EndingRecord | undefined> {
  const outcome = await CancellationScope.cancellable(() => callModel(run, true));
  run.state = applyModelReply(
    run.state,
    outcome,
    hasPromptEstimate(outcome) && patchedOrLight(LoopPatches.calibratedTokenEstimates),
  );
  const sortUnusable =
    isCutOffFinalReply(outcome, run.protocol, retriesLeft) && patchedOrLight(LoopPatches.unusableReplies);
  const read = readFinalReply(run.state, outcome, run.protocol, retriesLeft, sortUnusable);
  run.state = read.state;
  switch (read.step.kind) {
    case 'ask_again':
      return undefined;
    case 'take':
      return {
        ...(read.step.openCalls.length ? { openTurn: unansweredTurn(read.step.openCalls) } : {}),
        ...takeFinalAnswer(run, read.step.answer),
      };
    default: {
      const unknown: never = read.step;
      throw new Error(`unknown final reply step ${JSON.stringify(unknown)}`);
    }
  }
}

/** The final answer becomes the run's; against a schema it may fail (the error says why) or get a correction no call follows. */
function takeFinalAnswer(run: ResearchRun, answer: string | undefined): EndingRecord {
  if (answer === undefined) return {};
  const checked = checkAnswer(
    run.state,
    answer,
    run.answerChecks.answerSchema,
    run.options.answerAttempts,
    run.answerChecks.boundedAnswerChecks,
  );
  run.state = checked.state;
  switch (checked.check.kind) {
    case 'accepted':
      return { lastAnswer: checked.given };
    case 'failed':
      return { lastAnswer: checked.given, error: checked.check.message };
    case 'retry':
      run.state = appendPendingText(run.state, checked.check.correction);
      return { lastAnswer: checked.given };
    default: {
      const unknown: never = checked.check;
      throw new Error(`unknown answer check ${JSON.stringify(unknown)}`);
    }
  }
}
