import type { Distribution, TrajectoryStatistics } from '../../core/evaluation/evaluation-report';
import type { EvaluationRun } from '../../core/evaluation/evaluation-runs';

/** count, mean, median (mean of the middle two for an even count), min, max and the values. Empty: all 0. */
export function distributionOf(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, mean: 0, median: 0, min: 0, max: 0, values: [] };
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    count: values.length,
    mean: values.reduce((sum, value) => sum + value, 0) / values.length,
    median,
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
    values: [...values],
  };
}

/**
 * Trajectory statistics over runs: terminations (counts and frequencies), tool calls per
 * question by tool name (mean over the runs, a run that made none counting 0), model calls,
 * tokens and durations (over the runs that record them), answer lengths in characters.
 */
export function trajectoryStatistics(runs: EvaluationRun[]): TrajectoryStatistics {
  const terminations: Record<string, number> = {};
  const toolCallTotals: Record<string, number> = {};
  for (const run of runs) {
    terminations[run.termination] = (terminations[run.termination] ?? 0) + 1;
    for (const [name, count] of Object.entries(run.toolCalls))
      toolCallTotals[name] = (toolCallTotals[name] ?? 0) + count;
  }
  const terminationFrequencies = Object.fromEntries(
    Object.entries(terminations).map(([name, count]) => [name, count / runs.length]),
  );
  const toolCallsPerQuestion = Object.fromEntries(
    Object.entries(toolCallTotals).map(([name, count]) => [name, count / runs.length]),
  );
  const allToolCalls = runs.map((run) => Object.values(run.toolCalls).reduce((sum, count) => sum + count, 0));
  return {
    runs: runs.length,
    terminations,
    terminationFrequencies,
    toolCallsPerQuestion,
    toolCallTotals,
    toolCalls: distributionOf(allToolCalls),
    modelCalls: distributionOf(runs.map((run) => run.modelCalls)),
    tokens: distributionOf(runs.flatMap((run) => (run.tokens === undefined ? [] : [run.tokens]))),
    durationsMs: distributionOf(runs.flatMap((run) => (run.durationMs === undefined ? [] : [run.durationMs]))),
    answerLengths: distributionOf(runs.map((run) => run.prediction.length)),
  };
}
