import type { WorkflowHandle } from '@temporalio/client';
import { validateRunInput, type ResearchRunInput } from '../core/run-input';
import { toolNamesFromList } from '../core/tool-spec';
import type { ResearchAgentWorkflow } from '../core/workflow-types';
import type { CliContext } from './cli-context';
import { startResearch } from '../client/research-client';
import { newRunId } from '../client/run-identifiers';
import { budgetsFrom, oneRunOptionSpecs, type OneRunFlag } from './run-options';
import { subRunOptionsFrom } from './sub-run-option';
import { UsageError } from './usage-error';

/** The values of `run` and `start`'s run options, by flag. */
export type RunOptionValues = { [flag in OneRunFlag]?: string };

/** Builds and checks a run's input from the command line; a bad value is a usage error. */
export function runInputFrom(question: string | undefined, values: RunOptionValues, help: string): ResearchRunInput {
  if (!question) throw new UsageError('Give the research question in quotes.', help);
  const limits = budgetsFrom(values, Object.keys(oneRunOptionSpecs), help, { checkRanges: false });
  const subruns = subRunOptionsFrom(values, help);
  const input: ResearchRunInput = {
    question,
    ...(values.answer ? { answer: values.answer } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(values.tools !== undefined ? { tools: toolNamesFromList(values.tools) } : {}),
    ...(values.model ? { model: { model: values.model } } : {}),
    ...(values.protocol ? { protocol: values.protocol as ResearchRunInput['protocol'] } : {}),
    ...(subruns ? { subruns } : {}),
  };
  const { problems } = validateRunInput(input);
  if (problems.length) throw new UsageError(`Invalid run: ${problems.join('; ')}.`, help);
  return input;
}

/** Starts a `researchAgent` run on the worker's task queue, through the client library (src/client). */
export async function startRun(
  context: CliContext,
  input: ResearchRunInput,
  workflowId = newRunId(input.question),
): Promise<WorkflowHandle<ResearchAgentWorkflow>> {
  return (await startResearch(context.client, input, { taskQueue: context.worker.taskQueue, workflowId })).workflow;
}
