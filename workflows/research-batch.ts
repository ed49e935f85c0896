import { ApplicationFailure, CancellationScope, continueAsNew, patched } from '@temporalio/workflow';
import { validateBatchInput, type BatchSummary, type ResearchBatchInput } from '../src/core/batch-contract';
import { BatchFailureTypes } from '../src/core/batch-messages';
import { BatchRun } from './batch-run';
import { InputPatches } from './patches';

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
 *
 * The state and its steps are `BatchRun`'s (workflows/batch-run.ts); this reads as the steps.
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
  const batch = new BatchRun(input);
  batch.register();
  // Everything runs in a non-cancellable scope: a cancellation is noticed by the batch and handled
  // by its steps (no new runs, the running ones cancelled one by one), so the batch's own
  // bookkeeping and every ended run's line still get written.
  return CancellationScope.nonCancellable(async () => {
    if (!input.carry) await batch.openOutput();
    await batch.startRuns();
    await batch.letRunsEnd();
    if (batch.continuesAsNew()) return continueAsNew<typeof researchBatch>(batch.continuation());
    return batch.finish();
  });
}
