import type { WorkflowHandle } from '@temporalio/client';
import { validateRunInput, type ResearchRunInput } from '../core/run-input';
import { toolNamesFromList } from '../core/tool-spec';
import type { ResearchAgentWorkflow } from '../core/workflow-types';
import type { CliContext } from './cli-context';
import { startResearch } from '../client/research-client';
import { newRunId } from '../client/run-identifiers';
import { costOption } from './cost-option';
import { UsageError } from './usage-error';

export const runOptionsHelp = `  --answer TEXT        reference answer, kept in the result for evaluation
  --max-calls N        model-call budget (default 100)
  --max-minutes N      wall-time budget in minutes (default 150)
  --max-tokens N       context budget in tokens (default 110000)
  --max-cost USD       cost budget in US dollars at the workers' prices (REACT_AGENT_MODEL_PRICES;
                       default none): at it the run asks for its final answer and ends cost_limit
  --tools a,b          tools the run may use, or none (default: all the worker has)
  --model NAME         model for this run (default: the worker's REACT_AGENT_MODEL)
  --protocol NAME      deep-research (default), native (OpenAI tool calls) or classic (Thought/Action)
  --id ID              workflow id (default: research-<question words>-<time>-<random>)`;

export const runOptionSpecs = {
  answer: { type: 'string' },
  'max-calls': { type: 'string' },
  'max-minutes': { type: 'string' },
  'max-tokens': { type: 'string' },
  'max-cost': { type: 'string' },
  tools: { type: 'string' },
  model: { type: 'string' },
  protocol: { type: 'string' },
  id: { type: 'string' },
} as const;

export type RunOptionValues = { [name in keyof typeof runOptionSpecs]?: string };

/** Builds and checks a run's input from the command line; a bad value is a usage error. */
export function runInputFrom(question: string | undefined, values: RunOptionValues, help: string): ResearchRunInput {
  if (!question) throw new UsageError('Give the research question in quotes.', help);
  const number = (name: keyof RunOptionValues) => (values[name] === undefined ? undefined : Number(values[name]));
  const limits = Object.fromEntries(
    Object.entries({
      maxModelCalls: number('max-calls'),
      maxDurationMinutes: number('max-minutes'),
      maxContextTokens: number('max-tokens'),
      maxCostUsd: costOption(values['max-cost'], help),
    }).filter(([, value]) => value !== undefined),
  );
  const input: ResearchRunInput = {
    question,
    ...(values.answer ? { answer: values.answer } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(values.tools !== undefined ? { tools: toolNamesFromList(values.tools) } : {}),
    ...(values.model ? { model: { model: values.model } } : {}),
    ...(values.protocol ? { protocol: values.protocol as ResearchRunInput['protocol'] } : {}),
  };
  const { problems } = validateRunInput(input);
  if (problems.length) throw new UsageError(`Invalid run: ${problems.join('; ')}.`, help);
  return input;
}

/** Starts a `researchAgent` run on the worker's task queue, through the client library (src/client). */
export async function startRun(context: CliContext, input: ResearchRunInput, workflowId = newRunId(input.question)): Promise<WorkflowHandle<ResearchAgentWorkflow>> {
  return (await startResearch(context.client, input, { taskQueue: context.worker.taskQueue, workflowId })).workflow;
}
