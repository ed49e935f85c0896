import { isCancellation, patched, workflowInfo } from '@temporalio/workflow';
import type { CallModelOutput } from '../../src/core/activity-contracts';
import { learnedFromOverflow, withSummaryLimits } from '../../src/core/context-window';
import { FailureTypes } from '../../src/core/failure-types';
import { isUnusableReply, readReply, type ReplyStep } from '../../src/core/reply-steps';
import { unpricedCostBudgetError } from '../../src/core/ending-texts';
import {
  budgetEndBeforeModelCall,
  costBudgetEndsLoop,
  costBudgetWithoutPrice,
  compressionDue,
  compressionTarget,
  contextOverLimit,
  continueAsNewDue,
} from '../../src/core/run-budgets';
import type { Ending } from '../../src/core/run-ending';
import { applyCompression, applyModelReply, hasPromptEstimate } from '../../src/core/run-transitions';
import { unansweredTurn } from '../../src/core/turns';
import { runActivities } from '../activity-proxies';
import { failureType, rootMessage } from '../failures';
import { LoopPatches } from '../patches';
import { callModel } from '../model-call';
import type { ResearchRun } from '../research-run';
import { recordModelCall, recordModelCallRead } from '../run-search-attributes';
import { patchedOrLight } from '../light-bookkeeping';
import { runToolTurn } from './tool-turn';

/**
 * The ReAct loop: model call after model call until a step ends it. Runs in the run's loop
 * scope, which a stop request (deadline, `finishNow`) cancels; the deadline timer runs meanwhile
 * (the next phase cancels it as it starts: `ResearchRun.leaveLoop`).
 */
export async function reactLoop(run: ResearchRun): Promise<Ending> {
  run.armDeadline();
  return run.runLoop(async () => {
    for (;;) {
      const ended = await iterate(run);
      if (ended) return ended;
    }
  });
}

/** One iteration: budgets checked, injected messages delivered, the context compressed if due, one model call, its step taken. */
async function iterate(run: ResearchRun): Promise<Ending | undefined> {
  const now = Date.now();
  const { finalAnswerPhase } = run.options;
  const costBudget = costBudgetEndsLoop(run.state, now, finalAnswerPhase) && patched(LoopPatches.costBudget);
  const budget = budgetEndBeforeModelCall(run.state, now, { finalAnswerPhase, costBudget });
  if (budget) return { kind: 'budget_ended', budget };
  if (continueAsNewDue(run.state, run.options, workflowInfo().continueAsNewSuggested))
    return { kind: 'continue_as_new' };
  run.deliverInjected();
  await compressIfDue(run);
  if (contextOverLimit(run.state)) return { kind: 'budget_ended', budget: 'token_limit' };

  let outcome: CallModelOutput;
  try {
    outcome = await callModel(run, false);
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (failureType(error) === FailureTypes.modelContextLengthExceeded) {
      // The window the refusal names is the run's from now on (the final answer call is fitted to it).
      if (patchedOrLight(LoopPatches.contextWindow)) run.state = learnedFromOverflow(run.state, rootMessage(error));
      return { kind: 'budget_ended', budget: 'token_limit' };
    }
    return { kind: 'failed', message: rootMessage(error) };
  }
  run.state = applyModelReply(
    run.state,
    outcome,
    hasPromptEstimate(outcome) && patchedOrLight(LoopPatches.calibratedTokenEstimates),
  );
  recordModelCall(run);
  const sortUnusable = isUnusableReply(outcome, run.protocol) && patchedOrLight(LoopPatches.unusableReplies);
  const read = readReply(
    run.state,
    outcome,
    { protocol: run.protocol, options: run.options, ...run.answerChecks },
    sortUnusable,
  );
  run.state = read.state;
  run.noteAnswer(read.given);
  recordModelCallRead(run, read.step.kind === 'end');
  if (read.step.kind !== 'end' && costBudgetWithoutPrice(run.state) && patched(LoopPatches.costBudget))
    return unpricedCostBudget(run, read.step);
  return takeStep(run, read.step);
}

/**
 * The run has a cost budget but its model call came back without a cost (the worker has no price
 * for the model): it ends `error` saying so, its reply's tool calls answered as not run (a reply
 * that ends the run anyway, such as an answer, is taken as it is).
 */
function unpricedCostBudget(run: ResearchRun, step: Exclude<ReplyStep, { kind: 'end' }>): Ending {
  const message = unpricedCostBudgetError(run.state.limits.maxCostUsd ?? 0, run.modelOptions().model);
  return { kind: 'failed', message, ...(step.kind === 'run_tools' ? { openTurn: unansweredTurn(step.calls) } : {}) };
}

/** Applies a reply's step: call again, run the tools, or end (the ending carries its error and the calls the reply left open). */
async function takeStep(run: ResearchRun, step: ReplyStep): Promise<Ending | undefined> {
  switch (step.kind) {
    case 'call_again':
      return undefined;
    case 'run_tools':
      return runToolTurn(run, step.calls, step.malformedLimitReached);
    case 'end':
      return step.ending;
    default: {
      const unknown: never = step;
      throw new Error(`unknown reply step ${JSON.stringify(unknown)}`);
    }
  }
}

/** Stubs old observations (and summarises old turns) when the context passed the threshold. */
async function compressIfDue(run: ResearchRun): Promise<void> {
  if (!compressionDue(run.state, run.options)) return;
  run.enter('compressing');
  const compressed = await runActivities.compressContext({
    workflowId: run.workflowId,
    conversation: run.state.conversation,
    append: run.state.pending,
    protocol: run.protocol.name,
    question: run.input.question,
    keepRecentTurns: run.options.keepRecentTurns,
    targetTokens: compressionTarget(run.state, run.options),
    summarize: run.options.summarizeOldTurns,
    model: run.modelOptions(),
    ...withSummaryLimits(run.state),
  });
  run.state = applyCompression(run.state, compressed);
}
