import { metricMeter } from '@temporalio/workflow';
import { AgentMetrics, type RunsFinishedLabels } from '../src/core/agent-metrics';

/**
 * Counts a finished run in `react_agent_runs_finished_total{termination}`. The workflow metric
 * meter hands values to the worker through a sink that is skipped while the workflow replays, and
 * a metric adds no command to history, so this needs no `patched()` marker: a replayed run (a
 * query after eviction, another worker taking the run over, a replay test) counts nothing.
 * A workflow task that emitted it and then failed before completing would count it twice (its
 * code runs again live); that is the only way to count a run twice.
 */
export function countFinishedRun(labels: RunsFinishedLabels): void {
  const { name, unit, description } = AgentMetrics.runsFinished;
  metricMeter.createCounter(name, unit, description).add(1, { ...labels });
}
