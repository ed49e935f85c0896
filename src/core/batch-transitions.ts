import type { SearchAttributePair } from '@temporalio/common';
import {
  batchOutputDirectory,
  batchRunId,
  pairOfOrdinal,
  type BatchCarry,
  type BatchChunkItem,
  type BatchEvaluation,
  type BatchRecord,
  type BatchSummary,
  type PrepareBatchChunkInput,
  type ResearchBatchInput,
  type WriteBatchLineInput,
} from './batch-contract';
import {
  batchCost,
  emptyBatchCounts,
  linesOf,
  summaryPerRollout,
  type BatchCounts,
  type BatchState,
} from './batch-progress';
import type { ResearchRunInput } from './run-input';
import { REACT_BATCH_ID, REACT_ROLLOUT } from './search-attributes';
import { preview } from './text';

/**
 * A batch run's decisions, pure and workflow-safe (workflows/batch-run.ts, `BatchRun`, holds the
 * state and calls them): what a new batch carries and records when it opens its output, the pairs
 * one workflow run takes, how each of its runs starts and what the line of a run that failed
 * says, when it pauses for continue-as-new and whether it continues, its state on a cancellation,
 * its summary and its result.
 */

/** What a new batch starts from: no pair started, empty counts, its output directory resolved (dated, when scheduled). */
export function initialCarry(input: ResearchBatchInput, startedAt: number, scheduledStart: Date): BatchCarry {
  return {
    cursor: 0,
    counts: emptyBatchCounts(input.rollouts),
    startedAt,
    output: batchOutputDirectory(input.output, input.schedule, scheduledStart),
    continuedAsNew: 0,
  };
}

/** What batch.json records when a new batch opens its output. */
export function openingRecord(
  input: ResearchBatchInput,
  batch: { id: string; concurrency: number; carry: BatchCarry; scheduledStart: Date },
): BatchRecord {
  return {
    id: batch.id,
    ...(input.name ? { name: input.name } : {}),
    input: input.input,
    ...(input.source ? { source: input.source } : {}),
    questions: input.questions,
    rollouts: input.rollouts,
    concurrency: batch.concurrency,
    run: input.run ?? {},
    output: batch.carry.output,
    ...(input.schedule
      ? { schedule: { id: input.schedule.id, scheduledStart: batch.scheduledStart.toISOString() } }
      : {}),
    startedAt: new Date(batch.carry.startedAt).toISOString(),
    status: 'running',
  };
}

/** The pairs one workflow run of the batch takes: from the cursor, `runsPerContinuation` of them at most. */
export function chunkInput(
  input: ResearchBatchInput,
  carry: BatchCarry,
  cursor: number,
  runsPerContinuation: number,
): PrepareBatchChunkInput {
  return {
    input: input.input,
    output: carry.output,
    questions: input.questions,
    rollouts: input.rollouts,
    from: cursor,
    to: Math.min(input.questions * input.rollouts, cursor + runsPerContinuation),
    resume: input.resume === true,
  };
}

/** How one pair's run starts: a child `researchAgent` with the batch's run options, tagged with the batch and rollout. */
export interface BatchRunStart {
  index: number;
  rollout: number;
  workflowId: string;
  question: string;
  /** The child's options: id, input, search attributes, and the question as its summary in the Web UI. */
  options: {
    workflowId: string;
    args: [ResearchRunInput];
    typedSearchAttributes: SearchAttributePair[];
    staticSummary: string;
  };
}

export function batchRunStart(batchId: string, input: ResearchBatchInput, item: BatchChunkItem): BatchRunStart {
  const { index, rollout } = pairOfOrdinal(item.ordinal, input.questions);
  const workflowId = batchRunId(batchId, index, rollout);
  const question = item.question as string;
  return {
    index,
    rollout,
    workflowId,
    question,
    options: {
      workflowId,
      args: [{ ...(input.run ?? {}), question, ...(item.answer !== undefined ? { answer: item.answer } : {}) }],
      typedSearchAttributes: [
        { key: REACT_BATCH_ID, value: batchId },
        { key: REACT_ROLLOUT, value: rollout },
      ],
      staticSummary: preview(question, 200),
    },
  };
}

/** What went wrong with a run that failed instead of returning a result: the innermost message. */
export function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current: Error | undefined = error instanceof Error ? error : undefined;
  while (current?.cause instanceof Error) {
    current = current.cause;
    message = current.message || message;
  }
  return message;
}

/** The input of `writeBatchLine` for a run that ended: its ids, its pair, and for a run that failed, what went wrong. */
export function lineInput(
  batch: { batchId: string; output: string },
  run: Pick<BatchRunStart, 'workflowId' | 'index' | 'rollout' | 'question'> & { runId?: string },
  answer: string | undefined,
  failed: { error: unknown } | undefined,
): WriteBatchLineInput {
  return {
    output: batch.output,
    batchId: batch.batchId,
    workflowId: run.workflowId,
    ...(run.runId ? { runId: run.runId } : {}),
    index: run.index,
    rollout: run.rollout,
    ...(failed
      ? {
          failure: {
            message: innermostMessage(failed.error),
            question: run.question,
            ...(answer !== undefined ? { answer } : {}),
          },
        }
      : {}),
  };
}

/**
 * The batch stops starting runs to continue as new: when Temporal suggests it, once this
 * workflow run started at least one (so every continuation makes progress).
 */
export function pausesForContinueAsNew(startedHere: number, continueAsNewSuggested: boolean): boolean {
  return startedHere > 0 && continueAsNewSuggested;
}

/** Pairs are left and the batch was not cancelled: it continues as new from the cursor. */
export function continuesAsNew(batch: { cancelled: boolean; cursor: number; total: number }): boolean {
  return !batch.cancelled && batch.cursor < batch.total;
}

/** The input the batch continues as new with: the same, carrying the cursor, the counts, and one more continuation. */
export function continuedInput(
  input: ResearchBatchInput,
  carry: BatchCarry,
  cursor: number,
  counts: BatchCounts,
): ResearchBatchInput {
  return { ...input, carry: { ...carry, cursor, counts, continuedAsNew: carry.continuedAsNew + 1 } };
}

/** A cancellation while the batch runs makes it `cancelling`; starting or finishing, it stays. */
export function stateOnCancel(state: BatchState): BatchState {
  return state === 'running' ? 'cancelling' : state;
}

/** The batch's `evaluate` option when it evaluates itself at its end: it has one and was not cancelled. */
export function evaluationAtEnd(input: ResearchBatchInput, cancelled: boolean): BatchEvaluation | undefined {
  return input.evaluate && !cancelled ? input.evaluate : undefined;
}

/** The batch's summary (summary.json) from its counts, as it ends. */
export function batchSummary(
  input: ResearchBatchInput,
  batch: { id: string; carry: BatchCarry; cancelled: boolean; endedAt: number },
): BatchSummary {
  const { carry } = batch;
  const perRollout = summaryPerRollout(carry.counts, input.questions);
  const cost = batchCost(perRollout);
  return {
    batchId: batch.id,
    ...(input.name ? { name: input.name } : {}),
    output: carry.output,
    input: input.input,
    questions: input.questions,
    rollouts: input.rollouts,
    cancelled: batch.cancelled,
    startedAt: new Date(carry.startedAt).toISOString(),
    endedAt: new Date(batch.endedAt).toISOString(),
    durationMs: batch.endedAt - carry.startedAt,
    continuedAsNew: carry.continuedAsNew,
    lines: linesOf(carry.counts),
    perRollout,
    // Only runs with a price have a cost, and histories recorded before prices had none: no field, as before.
    ...(cost ? { cost } : {}),
  };
}

/** What the batch returns: its summary with the lines the iter files were assembled from, and its evaluation. */
export function batchResult(
  summary: BatchSummary,
  written: { lines: number[] },
  evaluation: BatchSummary['evaluation'],
): BatchSummary {
  return {
    ...summary,
    lines: written.lines.reduce((sum, count) => sum + count, 0),
    ...(evaluation ? { evaluation } : {}),
  };
}
