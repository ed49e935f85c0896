import { progressQuery } from '../../core/message-definitions';
import { openCliContext, printJson } from '../cli-context';
import { modelLimitWaitOfPendingActivity } from '../streamed-text';
import { subRunStatuses } from '../sub-run-status';
import { webUiLink } from '../temporal-client';
import { UsageError } from '../usage-error';

export const statusHelp = `Usage: react-agent status <run-id>

Prints the run's Temporal status and, while it runs, its progress: model calls, context tokens,
tokens so far (totalTokens) and their cost in USD (costUsd, when the worker has a price for the
model: REACT_AGENT_MODEL_PRICES), elapsed time, last thought and open tool calls; while a model
call waits for its model's shared limit (REACT_AGENT_MODEL_LIMITS), waitingForModelLimit says so. A run that
delegated (--subruns) has its sub-runs under subRuns, at any depth, in the order it delegated them:
each one's id, label, Temporal status, termination, model calls and model-call budget, tokens
and cost (listed by the tree's ReactTreeId; a sub-run started a moment ago may be missing;
"unavailable (...)" when visibility cannot list them).`;

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
    // A visibility store that cannot list the tree costs the sub-runs' lines, never the run's own.
    const subRuns = await subRunStatuses(
      context.client,
      workflowId,
      searchAttributes.getAll().find((pair) => pair.key.name === 'ReactTreeId')?.value,
    ).catch((error: unknown) => `unavailable (${(error as Error).message})`);
    const waitingForModelLimit = (description.raw.pendingActivities ?? [])
      .map(modelLimitWaitOfPendingActivity)
      .find((wait) => wait !== undefined);
    printJson({
      workflowId,
      runId: description.runId,
      status: description.status.name,
      startTime: description.startTime,
      closeTime: description.closeTime,
      termination: searchAttributes.getAll().find((pair) => pair.key.name === 'ReactTermination')?.value,
      webUi: webUiLink(context.temporal, workflowId),
      progress,
      ...(waitingForModelLimit ? { waitingForModelLimit } : {}),
      ...(typeof subRuns === 'string' || subRuns.length ? { subRuns } : {}),
    });
    return 0;
  } finally {
    await context.close();
  }
}
