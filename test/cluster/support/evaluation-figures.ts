import type {
  Distribution,
  EvaluationReport,
  TrajectoryStatistics,
} from '../../../src/core/evaluation/evaluation-report';

/**
 * What an evaluation says about a batch, without what differs between two runs of the same batch
 * by nature: when it was made, which batch id and output folder it read, the runs' workflow ids
 * and durations, and how the judge's verdicts split between calls made and verdicts found stored
 * (their sum stays). Two runs of one batch whose runs did the same thing give equal figures.
 */
export function evaluationFigures(report: EvaluationReport): unknown {
  const {
    createdAt: _createdAt,
    source: _source,
    judgeCalls,
    webUiBase: _webUiBase,
    statistics,
    questions,
    judge,
    ...rest
  } = report;
  return {
    ...rest,
    ...(judge ? { judge: { name: judge.name, model: judge.model } } : {}),
    ...(judgeCalls ? { verdicts: judgeCalls.made + judgeCalls.stored } : {}),
    statistics: { all: withoutDurations(statistics.all), solved: withoutDurations(statistics.solved) },
    questions: questions.map((row) => ({
      ...row,
      rollouts: row.rollouts.map(({ runId: _runId, ...verdict }) => verdict),
    })),
  };
}

function withoutDurations(
  statistics: TrajectoryStatistics,
): Omit<TrajectoryStatistics, 'durationsMs'> & { durationsMs: Pick<Distribution, 'count'> } {
  return { ...statistics, durationsMs: { count: statistics.durationsMs.count } };
}

/** The paths (`statistics.all.tokens.mean`, `questions[2].rollouts[0].isCorrect`, …) where two values differ, with both values. */
export function differences(expected: unknown, actual: unknown, path = ''): string[] {
  if (Object.is(expected, actual)) return [];
  if (
    typeof expected !== 'object' ||
    typeof actual !== 'object' ||
    expected === null ||
    actual === null ||
    Array.isArray(expected) !== Array.isArray(actual)
  ) {
    return [`${path || '(whole)'}: ${JSON.stringify(expected)} ≠ ${JSON.stringify(actual)}`];
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  return [...keys].flatMap((key) =>
    differences(
      (expected as Record<string, unknown>)[key],
      (actual as Record<string, unknown>)[key],
      Array.isArray(expected) ? `${path}[${key}]` : path ? `${path}.${key}` : key,
    ),
  );
}
