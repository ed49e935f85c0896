import {
  ApplicationFailure,
  ContinueAsNew,
  isCancellation,
  TemporalFailure,
  WorkflowError,
} from '@temporalio/workflow';
import { FailureTypes } from '../src/core/failure-types';
import type { ResearchRunResult } from '../src/core/run-result';
import { finish } from './phases/finish';
import type { ResearchRun } from './research-run';

/**
 * Whether an error is a poison pill: thrown by the workflow's own code (a TypeError, a RangeError,
 * a SyntaxError…) rather than by Temporal. The SDK fails the workflow TASK on such an error, and
 * the task is retried on every worker, for ever: the same input fails the same way each time.
 * Temporal's own errors keep their meaning: a cancellation cancels the run, a continue-as-new
 * continues it, a `TemporalFailure` (ApplicationFailure, ActivityFailure…) fails it, and the SDK's
 * `WorkflowError` (a determinism violation) fails the task, so a fixed deployment can replay it.
 */
export function isPoisonPill(error: unknown): boolean {
  return !(
    isCancellation(error) ||
    error instanceof ContinueAsNew ||
    error instanceof TemporalFailure ||
    error instanceof WorkflowError
  );
}

/** The reason a run ended by a poison pill gives. */
export function poisonPillReason(error: unknown): string {
  const described = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `The run's workflow code failed on this run's data (${described.slice(0, 500)}); it would fail the same way on every worker, so the run ends here.`;
}

/**
 * Runs a research run's phases so that a poison pill ends its own run, never a worker's task
 * loop (issue 28): the run finishes `error` with the reason, its transcript closed as any ending
 * closes it. An error while finishing (finishing again would meet it again) fails the workflow
 * with `ReactAgent.Run.InternalError`, non-retryable. No `patched()` marker: a history cannot hold
 * such an error except as failed workflow tasks, whose commands it never recorded, so a run
 * stuck on one ends at its next attempt on this code and no recorded history changes.
 */
export async function endingPoisonPills(
  run: ResearchRun,
  phases: () => Promise<ResearchRunResult>,
): Promise<ResearchRunResult> {
  try {
    return await phases();
  } catch (error) {
    if (!isPoisonPill(error)) throw error;
    const reason = poisonPillReason(error);
    const ending = run.failedEnding(reason);
    if (ending === undefined)
      throw ApplicationFailure.create({ type: FailureTypes.internalError, message: reason, nonRetryable: true });
    return finish(run, ending);
  }
}
