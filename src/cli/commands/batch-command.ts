import { WorkflowNotFoundError } from '@temporalio/client';
import type { BatchSummary, ResearchBatchInput } from '../../core/batch-contract';
import { batchProgressQuery } from '../../core/batch-messages';
import { WorkflowTypes, type ResearchBatchWorkflow } from '../../core/workflow-types';
import { describeBatchSummary, followBatch, remainingMsAt } from '../batch-follow';
import {
  batchOptionSpecs,
  batchSettingsFrom,
  batchSummaryText,
  checkedBatchFiles,
  checkedOutputDirectory,
  newBatchId,
  reportRejected,
  researchBatchInputOf,
  storeInput,
  type CheckedBatchFiles,
} from '../batch-options';
import { openCliContext, printJson, type CliContext } from '../cli-context';
import { hasLiveWorker } from '../../processes/local-stack';
import { webUiLink } from '../temporal-client';
import { evaluateOptionsHelp } from '../evaluate-option';
import { parseCommandLine } from '../command-line';
import { everyRunOptionsHelp } from '../run-options';
import { UsageError } from '../usage-error';

export const batchHelp = `Usage: react-agent batch <questions.jsonl|.json|.csv> --output DIR [options] [run options]

Runs every question of the file as a durable batch: a researchBatch workflow that starts one
researchAgent run per (question, rollout), id <batch-id>/q<index>-r<rollout>, at most N at a time.
Prints the batch id (stdout) and its Web UI link (stderr). A worker must be running.

The file is checked first (.jsonl: an object a line; .json: a list of objects; each with
"question" and optional "answer"; .csv: a header naming question and answer). Every bad line is
reported with its line number and nothing starts (exit 2). Duplicate questions are kept and noted.
The questions are stored by content hash, so editing the file later changes nothing.

Output, written by the workers: DIR/iter1.jsonl … iterK.jsonl (one line per run, DeepResearch's
shape: question, answer, messages, prediction, termination, then runId, index, rollout, usage, …),
DIR/batch.json, and at the end DIR/summary.json.

  --output DIR         output directory the workers can reach (created if missing), or
                       s3://bucket/prefix (AWS_* credentials, AWS_ENDPOINT_URL for S3-compatible servers)
  --rollouts K         runs per question, 1 to 100 (default 1)
  --concurrency N      runs at once (default 8)
  --name NAME          a name, kept in batch.json; the id becomes batch-NAME-<time>-<random>
  --id ID              the batch's workflow id
  --resume             DIR has results of this input: keep them, rerun only missing pairs and
                       those that ended "error" (their new line replaces the old)
  --wait               follow the batch until it ends; exit 0 when every run reached a
                       termination, 1 when the batch failed or was cancelled
${evaluateOptionsHelp}
${everyRunOptionsHelp}

Follow it with 'react-agent follow <batch-id>', see counts with 'react-agent status <batch-id>',
stop it with 'react-agent cancel <batch-id>', list batches with 'react-agent list --batches'.`;

const batchCommandOptionSpecs = {
  ...batchOptionSpecs,
  id: { type: 'string' },
  resume: { type: 'boolean' },
  wait: { type: 'boolean' },
} as const;

export async function batchCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argumentsList, batchCommandOptionSpecs, batchHelp);
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `Give one input file, got ${positionals.length}.` : 'Give the questions file (.jsonl, .json or .csv).', batchHelp);
  if (!values.output) throw new UsageError('--output DIR is required: where the iter files go.', batchHelp);
  const settings = batchSettingsFrom(values, batchHelp);
  const resume = values.resume === true;
  let files: CheckedBatchFiles;
  try {
    files = await checkedBatchFiles(positionals[0] as string, values.output, { resume });
  } catch (error) {
    return reportRejected(error);
  }
  const context = await openCliContext();
  try {
    const input = await storeInput(context.store, files.file);
    try {
      await checkedOutputDirectory(files.output, { resume, input });
    } catch (error) {
      return reportRejected(error);
    }
    for (const note of files.notes) console.error(note);
    const batchInput = researchBatchInputOf(files, input, settings, { resume });
    const id = values.id ?? newBatchId(values.name);
    await startBatch(context, id, batchInput);
    console.log(id);
    const link = webUiLink(context.temporal, id);
    console.error(`Batch ${id} started: ${batchSummaryText(batchInput.questions, batchInput.rollouts, batchInput.output)}${link ? `\nWeb UI: ${link}` : ''}`);
    if (!(await hasLiveWorker(context.client, context.temporal.namespace, context.worker.taskQueue).catch(() => true))) {
      console.error(`No worker is polling task queue "${context.worker.taskQueue}"; start one with 'npm run worker'.`);
    }
    if (!values.wait) return 0;
    return await followToEnd(context, id);
  } finally {
    await context.close();
  }
}

/** Starts a `researchBatch` with its summary ("20 questions × 3 rollouts → DIR") and a memo for `list --batches`. */
export async function startBatch(context: CliContext, id: string, input: ResearchBatchInput) {
  return context.client.workflow.start<ResearchBatchWorkflow>(WorkflowTypes.researchBatch, {
    taskQueue: context.worker.taskQueue,
    workflowId: id,
    args: [input],
    staticSummary: batchSummaryText(input.questions, input.rollouts, input.output),
    memo: { questions: input.questions, rollouts: input.rollouts, output: input.output, ...(input.name ? { name: input.name } : {}) },
  });
}

/** Follows a batch to its end and prints its summary: 0 when every pair reached a termination, 1 otherwise. */
async function followToEnd(context: CliContext, id: string): Promise<number> {
  let summary: BatchSummary;
  try {
    summary = await followBatch(context.client, id, { tty: process.stderr.isTTY === true, write: (text) => process.stderr.write(text) });
  } catch (error) {
    console.error(`react-agent: ${(error as Error).message}`);
    return 1;
  }
  console.log(describeBatchSummary(summary));
  // eval-command (the tokenizer, the report renderer) is loaded only when there is an evaluation to print.
  const evaluated = summary.evaluation ? await (require('./eval-command') as typeof import('./eval-command')).printBatchEvaluation(summary.evaluation) : true;
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
      progress = { ...answered, ...(etaMs !== undefined ? { etaMs, eta: new Date(Date.now() + etaMs).toISOString() } : {}) };
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
    console.log(`Cancellation requested for batch ${id}: no new runs start; the running ones end "cancelled" with their lines written, then the batch writes its summary.`);
    return 0;
  } finally {
    await context.close();
  }
}

export const listBatchesHelp = `  --batches   list recent batches instead: id, status, questions × rollouts, output, start time`;

async function listBatchesCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseCommandLine(argumentsList, { batches: { type: 'boolean' }, limit: { type: 'string', default: '20' }, query: { type: 'string' } }, listBatchesHelp);
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number, got ${JSON.stringify(values.limit)}.`, listBatchesHelp);
  const query = `WorkflowType = '${WorkflowTypes.researchBatch}'${values.query ? ` AND (${values.query})` : ''}`;
  const context = await openCliContext();
  try {
    let count = 0;
    console.log(['BATCH ID', 'STATUS', 'PAIRS', 'OUTPUT', 'STARTED'].join('\t'));
    for await (const batch of context.client.workflow.list({ query })) {
      const memo = (batch.memo ?? {}) as { questions?: number; rollouts?: number; output?: string };
      console.log([batch.workflowId, batch.status.name, memo.questions ? `${memo.questions}×${memo.rollouts ?? 1}` : '-', memo.output ?? '-', batch.startTime.toISOString()].join('\t'));
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
  follow: { note: 'a progress bar (a plain line every few seconds when not a terminal) until the batch ends, then its summary.', run: followBatchCommand },
  status: { note: 'counts by state and termination per rollout, runs per minute and the ETA (query `progress`).', run: batchStatusCommand },
  cancel: { note: 'no new runs start; running runs end "cancelled" with their lines; the batch ends with its summary.', run: cancelBatchCommand },
} satisfies Record<string, { note: string; run: (batchId: string) => Promise<number> }>;

/**
 * A run command that takes a batch id too: an id that names a `researchBatch` gets the batch's
 * side ({@link batchSides}), anything else goes to the run command as before.
 */
export function takingBatchIds(runCommand: Command, side: (typeof batchSides)[keyof typeof batchSides]): Command {
  return {
    help: `${runCommand.help}\n\nGiven a batch id: ${side.note}`,
    run: async (argumentsList) => ((await isBatch(argumentsList[0])) ? side.run(argumentsList[0] as string) : runCommand.run(argumentsList)),
  };
}

/** `list`, which with `--batches` lists recent batches instead of runs. */
export function listingBatches(listRuns: Command): Command {
  return {
    help: `${listRuns.help}\n${listBatchesHelp}`,
    run: (argumentsList) => (argumentsList.includes('--batches') ? listBatchesCommand(argumentsList) : listRuns.run(argumentsList)),
  };
}
