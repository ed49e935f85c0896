import { formatUsd } from '../core/cost-figures';
import type { SubRunTotals } from '../core/sub-runs/sub-run-record';

/** A sub-run's short label: its workflow id below `rootId` (`sub-2-1`, `sub-2-1/sub-1-3`), or the whole id. */
export function subRunLabel(workflowId: string, rootId: string): string {
  return workflowId.startsWith(`${rootId}/`) ? workflowId.slice(rootId.length + 1) : workflowId;
}

const count = (value: number) => value.toLocaleString('en-US');

/**
 * The lines `run`, `follow` and `result --output` print of a run's sub-runs (issue 30): how many
 * and their model calls, then one line each with its id, termination, calls, tokens, cost and
 * time. None when the run did not delegate.
 */
export function subRunSummaryLines(subRuns: SubRunTotals | undefined): string[] {
  if (!subRuns?.runs.length) return [];
  const { runs, modelCalls } = subRuns;
  return [
    `Sub-runs: ${runs.length} (${count(modelCalls)} model call${modelCalls === 1 ? '' : 's'}; their tokens and cost are in the totals):`,
    ...runs.map((run) => {
      const cost = typeof run.usage.costUsd === 'number' ? `, ${formatUsd(run.usage.costUsd)}` : '';
      const error = run.error ? ` (${run.error.replace(/\s+/g, ' ').slice(0, 120)})` : '';
      return `  ${run.workflowId}: ${run.termination}${error}, ${count(run.modelCalls)} model call${run.modelCalls === 1 ? '' : 's'}, ${count(run.usage.totalTokens)} tokens${cost}, ${(run.durationMs / 1000).toFixed(1)} s`;
    }),
  ];
}
