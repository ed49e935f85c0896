import type { ResearchBatchInput } from '../../../core/batch-contract';
import { WorkflowTypes, type ResearchBatchWorkflow } from '../../../core/workflow-types';
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
} from '../../batch-preparation';
import { openCliContext, type CliContext } from '../../cli-context';
import { followToEnd } from './batch-sides';
import { hasLiveWorker } from '../../../processes/local-stack';
import { webUiLink } from '../../temporal-client';
import { evaluateOptionsHelp } from '../../evaluate-option';
import { parseCommandLine } from '../../command-line';
import { everyRunOptionsHelp } from '../../run-options';
import { UsageError } from '../../usage-error';

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
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length
        ? `Give one input file, got ${positionals.length}.`
        : 'Give the questions file (.jsonl, .json or .csv).',
      batchHelp,
    );
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
    console.error(
      `Batch ${id} started: ${batchSummaryText(batchInput.questions, batchInput.rollouts, batchInput.output)}${link ? `\nWeb UI: ${link}` : ''}`,
    );
    if (
      !(await hasLiveWorker(context.client, context.temporal.namespace, context.worker.taskQueue).catch(() => true))
    ) {
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
    memo: {
      questions: input.questions,
      rollouts: input.rollouts,
      output: input.output,
      ...(input.name ? { name: input.name } : {}),
    },
  });
}
