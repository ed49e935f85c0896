import { WorkflowNotFoundError } from '@temporalio/client';
import type { BatchSummary } from '../../../core/batch-contract';
import { batchProgressQuery } from '../../../core/batch-messages';
import { WorkflowTypes, type ResearchBatchWorkflow } from '../../../core/workflow-types';
import { describeBatchSummary, followBatch, remainingMsAt } from '../../batch-follow';
import { openCliContext, printJson, type CliContext } from '../../cli-context';
import { parseCommandLine } from '../../command-line';
import { webUiLink } from '../../temporal-client';
import { UsageError } from '../../usage-error';

/**
 * The batch side of `follow`, `status`, `cancel` and `list`: given a batch id (or `--batches`),
 * these commands act on the batch. Loaded by the command table for these commands only.
 */

/** Follows a batch to its end and prints its summary: 0 when every pair reached a termination, 1 otherwise. */
export async function followToEnd(context: CliContext, id: string): Promise<number> {
  let summary: BatchSummary;
  try {
    summary = await followBatch(context.client, id, {
      tty: process.stderr.isTTY === true,
      write: (text) => process.stderr.write(text),
    });
  } catch (error) {
    console.error(`react-agent: ${(error as Error).message}`);
    return 1;
  }
  console.log(describeBatchSummary(summary));
  // eval-command (the tokenizer, the report renderer) is loaded only when there is an evaluation to print.
  const evaluated = summary.evaluation
    ? await (require('../eval-command') as typeof import('../eval-command')).printBatchEvaluation(summary.evaluation)
    : true;
  return summary.cancelled || !evaluated ? 1 : 0;
}

/** Whether a workflow id names a batch (false when it names a run, or nothing, or Temporal cannot say). */
async function isBatch(id: string | undefined): Promise<boolean> {
  if (!id || id.startsWith('-')) return false;
  let context: CliContext;
  try {
    context = await openCliContext();
  } catch {
    return false;
  }
  try {
    return (await context.client.workflow.getHandle(id).describe()).type === WorkflowTypes.researchBatch;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    return false;
  } finally {
    await context.close();
  }
}

async function followBatchCommand(id: string): Promise<number> {
  const context = await openCliContext();
  try {
    return await followToEnd(context, id);
  } finally {
    await context.close();
  }
}

async function batchStatusCommand(id: string): Promise<number> {
  const context = await openCliContext();
  try {
    const handle = context.client.workflow.getHandle<ResearchBatchWorkflow>(id);
    const description = await handle.describe();
    let progress: unknown;
    try {
      const answered = await handle.query(batchProgressQuery);
      const etaMs = description.status.name === 'RUNNING' ? remainingMsAt(answered, Date.now()) : 0;
      progress = {
        ...answered,
        ...(etaMs !== undefined ? { etaMs, eta: new Date(Date.now() + etaMs).toISOString() } : {}),
      };
    } catch (error) {
      progress = `unavailable (${(error as Error).message})`;
    }
    printJson({
      batchId: id,
      runId: description.runId,
      status: description.status.name,
      summary: await description.staticSummary().catch(() => undefined),
      startTime: description.startTime,
      closeTime: description.closeTime,
      webUi: webUiLink(context.temporal, id),
      progress,
      ...(description.status.name === 'COMPLETED' ? { result: await handle.result() } : {}),
    });
    return 0;
  } finally {
    await context.close();
  }
}

async function cancelBatchCommand(id: string): Promise<number> {
  const context = await openCliContext();
  try {
    await context.client.workflow.getHandle(id).cancel();
    console.log(
      `Cancellation requested for batch ${id}: no new runs start; the running ones end "cancelled" with their lines written, then the batch writes its summary.`,
    );
    return 0;
  } finally {
    await context.close();
  }
}

export const listBatchesHelp = `  --batches   list recent batches instead: id, status, questions × rollouts, output, start time`;

async function listBatchesCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseCommandLine(
    argumentsList,
    { batches: { type: 'boolean' }, limit: { type: 'string', default: '20' }, query: { type: 'string' } },
    listBatchesHelp,
  );
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(
      `--limit must be a positive whole number, got ${JSON.stringify(values.limit)}.`,
      listBatchesHelp,
    );
  const query = `WorkflowType = '${WorkflowTypes.researchBatch}'${values.query ? ` AND (${values.query})` : ''}`;
  const context = await openCliContext();
  try {
    let count = 0;
    console.log(['BATCH ID', 'STATUS', 'PAIRS', 'OUTPUT', 'STARTED'].join('\t'));
    for await (const batch of context.client.workflow.list({ query })) {
      const memo = (batch.memo ?? {}) as { questions?: number; rollouts?: number; output?: string };
      console.log(
        [
          batch.workflowId,
          batch.status.name,
          memo.questions ? `${memo.questions}×${memo.rollouts ?? 1}` : '-',
          memo.output ?? '-',
          batch.startTime.toISOString(),
        ].join('\t'),
      );
      if (++count >= limit) break;
    }
    return 0;
  } finally {
    await context.close();
  }
}

/** A command as the CLI's table loads it (src/cli/main.ts `Command`). */
type Command = { help: string; run: (argumentsList: string[]) => Promise<number> };

/** What `follow`, `status` and `cancel` do given a batch id: the line their help gains, and the action. */
export const batchSides = {
  follow: {
    note: 'a progress bar (a plain line every few seconds when not a terminal) until the batch ends, then its summary.',
    run: followBatchCommand,
  },
  status: {
    note: 'counts by state and termination per rollout, runs per minute and the ETA (query `progress`).',
    run: batchStatusCommand,
  },
  cancel: {
    note: 'no new runs start; running runs end "cancelled" with their lines; the batch ends with its summary.',
    run: cancelBatchCommand,
  },
} satisfies Record<string, { note: string; run: (batchId: string) => Promise<number> }>;

/**
 * A run command that takes a batch id too: an id that names a `researchBatch` gets the batch's
 * side ({@link batchSides}), anything else goes to the run command as before.
 */
export function takingBatchIds(runCommand: Command, side: (typeof batchSides)[keyof typeof batchSides]): Command {
  return {
    help: `${runCommand.help}\n\nGiven a batch id: ${side.note}`,
    run: async (argumentsList) =>
      (await isBatch(argumentsList[0])) ? side.run(argumentsList[0] as string) : runCommand.run(argumentsList),
  };
}

/** `list`, which with `--batches` lists recent batches instead of runs. */
export function listingBatches(listRuns: Command): Command {
  return {
    help: `${listRuns.help}\n${listBatchesHelp}`,
    run: (argumentsList) =>
      argumentsList.includes('--batches') ? listBatchesCommand(argumentsList) : listRuns.run(argumentsList),
  };
}
