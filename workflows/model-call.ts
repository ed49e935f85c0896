import { setCurrentDetails } from '@temporalio/workflow';
import type { CallModelOutput } from '../src/core/activity-contracts';
import { nextContextTokens } from '../src/core/run-budgets';
import { modelCallRunFields } from '../src/core/call-inputs';
import { leanActivityInputs } from './light-bookkeeping';
import { countModelCall } from '../src/core/run-transitions';
import { finalAnswerActivityOptions, modelActivityOptions } from './activity-options';
import { runActivities } from './activity-proxies';
import type { ResearchRun } from './research-run';

/** One model call of the run (the final answer call when `finalAnswer`) with what is pending appended. */
export function callModel(run: ResearchRun, finalAnswer: boolean): Promise<CallModelOutput> {
  run.state = countModelCall(run.state);
  const { modelCalls, limits, conversation, pending } = run.state;
  run.enter(finalAnswer ? 'final_answer' : 'calling_model');
  setCurrentDetails(
    `Model call ${modelCalls} of ${limits.maxModelCalls}; about ${nextContextTokens(run.state)} context tokens.`,
  );
  const model = modelActivityOptions(run.setup.modelActivity);
  const options = finalAnswer ? finalAnswerActivityOptions(model, run.options.finalAnswerTimeoutSeconds) : model;
  return runActivities.callModel(
    { ...options, summary: finalAnswer ? `final answer (call ${modelCalls})` : `model call ${modelCalls}` },
    {
      modelCall: modelCalls,
      conversation,
      append: pending,
      model: run.modelOptions(),
      protocol: run.protocol.name,
      ...modelCallRunFields(
        { workflowId: run.workflowId, setup: run.setup, nativeTools: run.protocol.nativeTools },
        leanActivityInputs(),
      ),
      finalAnswer,
    },
  );
}
