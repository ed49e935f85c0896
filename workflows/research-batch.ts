import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  batchOutputDirectory,
  batchRunId,
  DEFAULT_BATCH_CONCURRENCY,
  DEFAULT_RUNS_PER_CONTINUATION,
  pairOfOrdinal,
  validateBatchInput,
  type BatchCarry,
  type BatchChunkItem,
  type BatchSummary,
  type ResearchBatchInput,
} from '../src/core/batch-contract';
import { BatchFailureTypes, batchProgressQuery } from '../src/core/batch-messages';
import {
  batchCost,
  batchProgress,
  emptyBatchCounts,
  linesOf,
  recordFinished,
  recordKept,
  recordStarted,
  summaryPerRollout,
  type BatchState,
} from '../src/core/batch-progress';
import type { ResearchRunResult } from '../src/core/run-result';
import { REACT_BATCH_ID, REACT_ROLLOUT, TEMPORAL_SCHEDULED_START_TIME } from '../src/core/search-attributes';
import { preview } from '../src/core/text';
import type { Termination } from '../src/core/termination';
import { WorkflowTypes, type ResearchAgentWorkflow } from '../src/core/workflow-types';
import { batchAssembly, batchBookkeeping, batchLines } from './batch-activity-proxies';
import { evaluateBatch } from './batch-evaluation';
import { BatchPatches, InputPatches } from './patches';
import { TaskSlots } from '../src/core/task-slots';

/**
 * A batch of research runs (issue 11; docs/architecture.md, "Batches are workflows of workflows"): one child `researchAgent` per
 * (question, rollout), id `<batch id>/q<index>-r<rollout>`, at most `concurrency` at a time,
 * each tagged with the search attributes `ReactBatchId` and `ReactRollout`.
 *
 * Results stay out of the batch's history: when a run ends, `writeBatchLine` reads its result
 * and writes its line to the output directory; the batch keeps counts only. Every
 * `runsPerContinuation` runs (or sooner, when Temporal suggests it) the batch lets its running
 * children finish and continues as new with its counts and the next ordinal, so any number of
 * questions fits in Temporal's history limits. At the end the iter files are assembled from the
 * run lines, each pair exactly once.
 *
 * Cancelling the batch starts no new runs, cancels the running ones (each ends `cancelled` with
 * a valid transcript and gets its line), and returns the summary as a normal result.
 */
export async function researchBatch(input: ResearchBatchInput): Promise<BatchSummary> {
  const problems = validateBatchInput(input);
  // Asked only when the input has problems, so valid batches' histories carry no marker.
  if (problems.length && patched(InputPatches.contractSchema)) {
    throw ApplicationFailure.create({
      type: BatchFailureTypes.invalidInput,
      message: `Invalid batch input: ${problems.join('; ')}.`,
      nonRetryable: true,
    });
  }
  const info = workflowInfo();
  const batchId = info.workflowId;
  const total = input.questions * input.rollouts;
  const concurrency = input.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const runsThisContinuation = input.runsPerContinuation ?? DEFAULT_RUNS_PER_CONTINUATION;
  const scheduledStart = info.typedSearchAttributes.get(TEMPORAL_SCHEDULED_START_TIME) ?? info.startTime;
  const carry: BatchCarry = input.carry ?? {
    cursor: 0,
    counts: emptyBatchCounts(input.rollouts),
    startedAt: Date.now(),
    output: batchOutputDirectory(input.output, input.schedule, scheduledStart),
    continuedAsNew: 0,
  };
  const { counts } = carry;
  let state: BatchState = input.carry ? 'running' : 'starting';
  let cancelled = false;
  let fatal: unknown;

  setHandler(batchProgressQuery, () =>
    batchProgress({
      batchId,
      ...(input.name ? { name: input.name } : {}),
      state,
      output: carry.output,
      questions: input.questions,
      concurrency,
      counts,
      startedAt: carry.startedAt,
      now: Date.now(),
      continuedAsNew: carry.continuedAsNew,
    }),
  );
  CancellationScope.current().cancelRequested.catch(() => {
    cancelled = true;
    if (state === 'running') state = 'cancelling';
  });

  // Everything runs in a non-cancellable scope: a cancellation is noticed through `cancelled`
  // and handled here (no new runs, the running ones cancelled one by one), so the batch's own
  // bookkeeping and every ended run's line still get written.
  return CancellationScope.nonCancellable(async () => {
    if (!input.carry) {
      await batchBookkeeping.openBatchOutput({
        record: {
          id: batchId,
          ...(input.name ? { name: input.name } : {}),
          input: input.input,
          ...(input.source ? { source: input.source } : {}),
          questions: input.questions,
          rollouts: input.rollouts,
          concurrency,
          run: input.run ?? {},
          output: carry.output,
          ...(input.schedule
            ? { schedule: { id: input.schedule.id, scheduledStart: scheduledStart.toISOString() } }
            : {}),
          startedAt: new Date(carry.startedAt).toISOString(),
          status: 'running',
        },
        resume: input.resume === true,
      });
      if (!cancelled) state = 'running';
    }

    /** Runs started and not yet cancelled: workflow id, by start order. */
    const children = new Set<string>();
    let cancelsSent = false;
    const slots = new TaskSlots(concurrency, condition);
    const cancelRun = (workflowId: string) => {
      void getExternalWorkflowHandle(workflowId)
        .cancel()
        .catch(() => undefined); // it may have ended meanwhile
    };

    /** One run and its line; gives its slot back last, where the hand-kept count used to drop, so histories replay. */
    const runPair = async (item: BatchChunkItem, giveBackSlot: () => void): Promise<void> => {
      const { index, rollout } = pairOfOrdinal(item.ordinal, input.questions);
      const workflowId = batchRunId(batchId, index, rollout);
      const question = item.question as string;
      let outcome:
        { termination: Termination; usage: ResearchRunResult['usage']; durationMs: number } | { failed: true };
      let runId: string | undefined;
      let failure: { message: string; question: string; answer?: string } | undefined;
      try {
        const child = await startChild<ResearchAgentWorkflow>(WorkflowTypes.researchAgent, {
          workflowId,
          args: [{ ...(input.run ?? {}), question, ...(item.answer !== undefined ? { answer: item.answer } : {}) }],
          typedSearchAttributes: [
            { key: REACT_BATCH_ID, value: batchId },
            { key: REACT_ROLLOUT, value: rollout },
          ],
          staticSummary: preview(question, 200),
        });
        runId = child.firstExecutionRunId;
        children.add(workflowId);
        if (cancelsSent) cancelRun(workflowId);
        const result = await child.result();
        outcome = { termination: result.termination, usage: result.usage, durationMs: result.durationMs };
      } catch (error) {
        failure = {
          message: failureMessage(error),
          question,
          ...(item.answer !== undefined ? { answer: item.answer } : {}),
        };
        outcome = { failed: true };
      } finally {
        children.delete(workflowId);
      }
      try {
        await batchLines.writeBatchLine({
          output: carry.output,
          batchId,
          workflowId,
          ...(runId ? { runId } : {}),
          index,
          rollout,
          ...(failure ? { failure } : {}),
        });
      } catch (error) {
        fatal ??= error;
      }
      recordFinished(counts, rollout, outcome);
      giveBackSlot();
    };

    let cursor = carry.cursor;
    const chunkEnd = Math.min(total, cursor + runsThisContinuation);
    if (!cancelled && cursor < total) {
      const { items } = await batchBookkeeping.prepareBatchChunk({
        input: input.input,
        output: carry.output,
        questions: input.questions,
        rollouts: input.rollouts,
        from: cursor,
        to: chunkEnd,
        resume: input.resume === true,
      });
      let startedHere = 0;
      for (const item of items) {
        if (item.kept) {
          recordKept(counts, pairOfOrdinal(item.ordinal, input.questions).rollout, item.kept);
          cursor = item.ordinal + 1;
          continue;
        }
        await slots.free(() => cancelled || fatal !== undefined);
        if (cancelled || fatal !== undefined) break;
        if (startedHere > 0 && workflowInfo().continueAsNewSuggested) break;
        const giveBackSlot = slots.take();
        startedHere += 1;
        recordStarted(counts, pairOfOrdinal(item.ordinal, input.questions).rollout);
        void runPair(item, giveBackSlot);
        cursor = item.ordinal + 1;
      }
    }

    // Let the running runs end; on a cancellation, cancel each once.
    while (slots.running > 0) {
      await slots.idle(() => cancelled && !cancelsSent);
      if (cancelled && !cancelsSent) {
        cancelsSent = true;
        for (const workflowId of children) cancelRun(workflowId);
      }
    }
    if (fatal !== undefined) throw fatal;

    if (!cancelled && cursor < total) {
      return continueAsNew<typeof researchBatch>({
        ...input,
        carry: { ...carry, cursor, counts, continuedAsNew: carry.continuedAsNew + 1 },
      });
    }

    state = 'finishing';
    const endedAt = Date.now();
    const perRollout = summaryPerRollout(counts, input.questions);
    const cost = batchCost(perRollout);
    const summary: BatchSummary = {
      batchId,
      ...(input.name ? { name: input.name } : {}),
      output: carry.output,
      input: input.input,
      questions: input.questions,
      rollouts: input.rollouts,
      cancelled,
      startedAt: new Date(carry.startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - carry.startedAt,
      continuedAsNew: carry.continuedAsNew,
      lines: linesOf(counts),
      perRollout,
      // Only runs with a price have a cost, and histories recorded before prices had none: no field, as before.
      ...(cost ? { cost } : {}),
    };
    const written = await batchAssembly.finishBatchOutput({ output: carry.output, summary });
    const evaluation =
      input.evaluate && !cancelled && patched(BatchPatches.evaluateAtEnd)
        ? await evaluateBatch(batchId, carry.output, input.evaluate)
        : undefined;
    state = 'finished';
    return {
      ...summary,
      lines: written.lines.reduce((sum, count) => sum + count, 0),
      ...(evaluation ? { evaluation } : {}),
    };
  });
}

/** What went wrong with a run that failed instead of returning a result: the innermost message. */
function failureMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current: Error | undefined = error instanceof Error ? error : undefined;
  while (current?.cause instanceof Error) {
    current = current.cause;
    message = current.message || message;
  }
  return message;
}
