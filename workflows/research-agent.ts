import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { FailureTypes } from '../src/core/failure-types';
import { validateRunInput, type ResearchRunInput } from '../src/core/run-input';
import type { ResearchRunResult } from '../src/core/run-result';
import { continueAsNewRun, finish } from './phases/finish';
import { finalAnswer } from './phases/final-answer';
import { openTranscript } from './phases/open-transcript';
import { reactLoop } from './phases/react-loop';
import { InputPatches } from './patches';
import { endingPoisonPills } from './poison-pills';
import { ResearchRun } from './research-run';
import type { ResearchAgentWorkflow } from '../src/core/workflow-types';

/**
 * A ReAct research run: the model thinks and calls tools until it answers or a budget ends the
 * run. Every model call and tool call is an activity; the transcript lives in the transcript
 * store and history carries references. Budgets end through a last tool-less call for the best
 * answer; whatever ends the run, every tool call in the transcript gets a response and the run
 * returns a normal result saying why it ended. Long runs continue as new, carrying their state.
 *
 * The run is a small state machine: `ResearchRun` holds the state and answers the messages, each
 * phase returns an `Ending`, and `concludeRun` (src/core/run-ending.ts) turns the last into the result.
 * An error of the workflow's own code (a poison pill) ends the run `error` with the reason instead
 * of failing its task on every worker (workflows/poison-pills.ts).
 */
export async function researchAgent(input: ResearchRunInput): Promise<ResearchRunResult> {
  // The internal `resume` is honoured only from this workflow's own continue-as-new (issue 28).
  const { limits, loop, problems } = validateRunInput(input, workflowInfo().continuedFromExecutionRunId);
  // Asked only when the input has problems, so valid runs' histories carry no marker.
  if (problems.length && patched(InputPatches.contractSchema)) {
    throw ApplicationFailure.create({
      type: FailureTypes.invalidRunInput,
      message: `Invalid run input: ${problems.join('; ')}.`,
      nonRetryable: true,
    });
  }
  const run = new ResearchRun(input, loop, limits);
  run.register();
  return endingPoisonPills(run, async () => {
    const ending = (await openTranscript(run)) ?? (await reactLoop(run));
    if (ending.kind === 'continue_as_new') return continueAsNewRun(run);
    return finish(run, await finalAnswer(run, ending));
  });
}

researchAgent satisfies ResearchAgentWorkflow;
