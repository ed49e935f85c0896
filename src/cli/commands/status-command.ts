import { progressQuery } from '../../core/message-definitions';
import { openCliContext, printJson } from '../cli-context';
import { webUiLink } from '../temporal-client';
import { UsageError } from '../usage-error';

export const statusHelp = `Usage: react-agent status <run-id>

Prints the run's Temporal status and, while it runs, its progress: model calls, context tokens,
tokens so far (totalTokens) and their cost in USD (costUsd, when the worker has a price for the
model: REACT_AGENT_MODEL_PRICES), elapsed time, last thought and open tool calls.`;

export async function statusCommand(positionals: string[]): Promise<number> {
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('status needs a run id.', statusHelp);
  const context = await openCliContext();
  try {
    const handle = context.client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    const searchAttributes = description.typedSearchAttributes;
    let progress: unknown;
    try {
      progress = await handle.query(progressQuery);
    } catch (error) {
      progress = `unavailable (${(error as Error).message})`;
    }
    printJson({
      workflowId,
      runId: description.runId,
      status: description.status.name,
      startTime: description.startTime,
      closeTime: description.closeTime,
      termination: searchAttributes.getAll().find((pair) => pair.key.name === 'ReactTermination')?.value,
      webUi: webUiLink(context.temporal, workflowId),
      progress,
    });
    return 0;
  } finally {
    await context.close();
  }
}
