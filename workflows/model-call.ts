import { setCurrentDetails } from '@temporalio/workflow';
import type { CallModelOutput } from '../src/core/activity-contracts';
import { nextContextTokens } from '../src/core/run-budgets';
import { toolNamesOf } from '../src/core/run-state';
import { countModelCall } from '../src/core/run-transitions';
import { finalAnswerActivityOptions, modelActivityOptions } from './activity-options';
import { runActivities } from './activity-proxies';
import type { ResearchRun } from './research-run';

/**
 * The reference of the run's stored tool specs, for a protocol that sends their schemas with each
 * model call (native tool calling); the others wrote them into the system prompt at the start, so
 * their calls carry no reference (history grows by none per call).
 */
function toolSpecsForModel(run: ResearchRun): { toolSpecs?: string } {
  return run.setup.toolSpecs && run.protocol.nativeTools ? { toolSpecs: run.setup.toolSpecs } : {};
}

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
      workflowId: run.workflowId,
      modelCall: modelCalls,
      conversation,
      append: pending,
      model: run.modelOptions(),
      protocol: run.protocol.name,
      tools: toolNamesOf(run.setup),
      ...toolSpecsForModel(run),
      finalAnswer,
    },
  );
}
