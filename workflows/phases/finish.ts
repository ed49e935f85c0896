import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { afterStoreFailure, type FinalEnding } from '../../src/core/run-ending';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import { closingState, continuedRunState } from '../../src/core/run-transitions';
import { REACT_ITERATIONS, REACT_TERMINATION } from '../../src/core/search-attributes';
import { localRunActivities, runActivities } from '../activity-proxies';
import { lightBookkeeping } from '../light-bookkeeping';
import { rootMessage } from '../failures';
import { countFinishedRun } from '../run-metrics';
import type { ResearchRun } from '../research-run';
import { recordContinuation, recordRunEnded } from '../run-search-attributes';

/**
 * Finishing, whatever ended the run: the ending concluded into termination and prediction, every
 * open tool call answered, the last messages stored (when there are any, with light bookkeeping),
 * the search attributes set, and the result built, in a scope no cancellation reaches. A run
 * cancelled before its transcript was opened has nothing to store.
 */
export function finish(run: ResearchRun, ending: FinalEnding): Promise<ResearchRunResult> {
  // A light run ends in this workflow task unless something is left to store: its deadline timer
  // is left for the server to drop (research-run.ts `leaveLoop`).
  const keepDeadline = lightBookkeeping();
  return CancellationScope.nonCancellable(() => run.leaveLoop(() => finishing(run, ending), { keepDeadline }));
}

/** {@link finish}'s steps once the loop is left, in the scope no cancellation reaches. */
async function finishing(run: ResearchRun, ending: FinalEnding): Promise<ResearchRunResult> {
  run.enter('finishing');
  let conclusion = run.conclude(ending);
  const { termination } = conclusion;
  let transcript = '';
  const light = lightBookkeeping();
  if (!run.state.setup) {
    if (!light) upsertSearchAttributes([{ key: REACT_TERMINATION, value: termination }]);
  } else {
    run.state = closingState(run.state, ending.openTurn, termination, run.takeInjected(), run.protocol);
    transcript = run.state.conversation;
    // A light run stores only what is left to append, in a local activity (issue 34): after an
    // answer nothing is, and the conversation the last model call returned is the transcript.
    if (!light || run.state.pending.length) {
      const finishTranscript = light ? localRunActivities.finishTranscript : runActivities.finishTranscript;
      try {
        transcript = (await finishTranscript({ conversation: run.state.conversation, append: run.state.pending }))
          .conversation;
      } catch (error) {
        conclusion = afterStoreFailure(conclusion, rootMessage(error));
      }
    }
    run.enter('done');
    if (!light)
      upsertSearchAttributes([
        { key: REACT_TERMINATION, value: termination },
        { key: REACT_ITERATIONS, value: run.state.modelCalls },
      ]);
    setCurrentDetails(`Ended: ${termination} after ${run.state.modelCalls} model calls.`);
  }
  // A light run's termination goes with everything else in one upsert.
  recordRunEnded(run, light ? [{ key: REACT_TERMINATION, value: termination }] : []);
  await condition(allHandlersFinished);
  countFinishedRun({ termination, role: run.tree?.depth ? 'sub_run' : 'run' });
  const { state, input } = run;
  return {
    question: input.question,
    answer: input.answer ?? '',
    prediction: conclusion.prediction,
    termination,
    transcript,
    iterations: state.modelCalls,
    toolCalls: state.toolCallsAnswered,
    usage: state.usage,
    contextTokens: state.contextTokens,
    durationMs: Date.now() - state.startedAt,
    ...(conclusion.error ? { error: conclusion.error } : {}),
    ...(conclusion.parsedAnswer !== undefined ? { parsedAnswer: conclusion.parsedAnswer } : {}),
    details: state.details,
    ...(state.subRuns ? { subRuns: state.subRuns } : {}),
  };
}

/**
 * Continues as new when the history is long: after every handler finished, with the state (and
 * the messages injected since the last call) carried into the next run of the same workflow,
 * marked with this run's id so the next run knows the state came from here and not from a client.
 */
export function continueAsNewRun(run: ResearchRun): Promise<never> {
  return run.leaveLoop(() => continuingAsNew(run), { keepDeadline: lightBookkeeping() });
}

/** {@link continueAsNewRun}'s steps once the loop is left. */
async function continuingAsNew(run: ResearchRun): Promise<never> {
  await condition(allHandlersFinished);
  run.state = continuedRunState(run.state, run.takeInjected());
  // A light run's model calls go with its tokens in one upsert (recordContinuation has both).
  if (!lightBookkeeping()) upsertSearchAttributes([{ key: REACT_ITERATIONS, value: run.state.modelCalls }]);
  recordContinuation(run);
  // `resumedFrom`: this run's id, which the next run checks against the run it continued from (src/core/run-input.ts).
  return continueAsNew<(input: ResearchRunInput) => Promise<ResearchRunResult>>({
    ...run.input,
    resume: run.state,
    resumedFrom: workflowInfo().runId,
  });
}
