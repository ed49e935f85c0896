import { cacheFigures, type CacheFigures } from '../../core/cache-figures';
import { costFigures, type CostFigures } from '../../core/cost-figures';
import { exactMatch, tokenF1 } from './answer-matching';
import type {
  EvaluationMetrics,
  EvaluationReport,
  QuestionRow,
  RolloutScore,
  RolloutVerdict,
  ScoringMethod,
} from '../../core/evaluation/evaluation-report';
import type { EvaluationRun } from '../../core/evaluation/evaluation-runs';
import { bestRollout, meanPassAt1, passAt1PerRollout, passAtAny, unbiasedPassAtK } from './pass-at-k';
import { trajectoryStatistics } from './trajectory-statistics';

/** How one run was scored. */
export interface RunVerdict {
  isCorrect: boolean;
  /** The judge's reply (or 'exact_match' / 'exact_mismatch'). */
  judgement: string;
  /** The judge's reply could not be read, even after a reminder; counted as not correct. */
  unparsed?: boolean;
  exactMatch?: number;
  f1?: number;
}

/** The key of a run's verdict in a verdict map: rollout and question. */
export function runKey(run: Pick<EvaluationRun, 'rollout' | 'question'>): string {
  return `${run.rollout}\u0000${run.question}`;
}

/** Whether any run has a reference answer (EM, F1 and the judge need one). */
export function hasReferences(rollouts: EvaluationRun[][]): boolean {
  return rollouts.some((runs) => runs.some((run) => run.reference.trim() !== ''));
}

/** The message when no line has a reference answer. */
export const NO_REFERENCES_MESSAGE =
  'No line has a reference answer ("answer"), so exact match, F1 and the judge cannot score anything; only the trajectory statistics were computed. Give the batch input an "answer" per question.';

/** Exact match and token F1 of a run against its reference; correct means exact match. */
export function exactMatchVerdict(run: EvaluationRun): RunVerdict {
  const em = exactMatch(run.prediction, run.reference);
  return {
    isCorrect: em === 1,
    judgement: em === 1 ? 'exact_match' : 'exact_mismatch',
    exactMatch: em,
    f1: tokenF1(run.prediction, run.reference),
  };
}

export interface BuildReportInput {
  /** Each rollout's runs, deduplicated (index 0 is rollout 1). */
  rollouts: EvaluationRun[][];
  /** Verdict of a run by {@link runKey}; a run without one counts as not correct. */
  verdicts: Map<string, RunVerdict>;
  method: ScoringMethod;
  judge?: EvaluationReport['judge'];
  createdAt: string;
  source: EvaluationReport['source'];
  skipped?: EvaluationReport['skipped'];
  duplicates?: EvaluationReport['duplicates'];
  judgeCalls?: EvaluationReport['judgeCalls'];
  notes?: string[];
  webUiBase?: string;
}

function mean(values: number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** The cost figures of runs, as a field to spread: none when no run had a price. */
function costOf(runs: readonly EvaluationRun[], correct: number): { cost?: CostFigures } {
  const cost = costFigures(
    runs.map((run) => run.costUsd),
    correct,
  );
  return cost ? { cost } : {};
}

/** The cache figures of runs, as a field to spread: none when no run reported cache tokens. */
function cacheOf(runs: readonly EvaluationRun[]): { cache?: CacheFigures } {
  const cache = cacheFigures(runs);
  return cache ? { cache } : {};
}

/**
 * The report: metrics over the union of unique questions of all rollouts (a question a rollout
 * has no line for counts as not correct in it, and is listed in `missingRuns`), statistics over
 * all runs and over the correct ones, the per-question table.
 */
export function buildEvaluationReport(input: BuildReportInput): EvaluationReport {
  const rolloutCount = input.rollouts.length;
  const questions: string[] = [];
  const references = new Map<string, string>();
  const byRollout = input.rollouts.map((runs) => new Map(runs.map((run) => [run.question, run])));
  for (const runs of input.rollouts) {
    for (const run of runs) {
      if (!references.has(run.question)) questions.push(run.question);
      if (!references.get(run.question)) references.set(run.question, run.reference);
    }
  }
  const verdictOf = (run: EvaluationRun) => input.verdicts.get(runKey(run));
  const correctness = questions.map((question) =>
    byRollout.map((runs) => {
      const run = runs.get(question);
      return run !== undefined && verdictOf(run)?.isCorrect === true;
    }),
  );
  const perRolloutPass = passAt1PerRollout(correctness, rolloutCount);
  const perRollout: RolloutScore[] = input.rollouts.map((runs, index) => {
    const ems = runs.flatMap((run) =>
      verdictOf(run)?.exactMatch === undefined ? [] : [verdictOf(run)?.exactMatch as number],
    );
    const f1s = runs.flatMap((run) => (verdictOf(run)?.f1 === undefined ? [] : [verdictOf(run)?.f1 as number]));
    const exactMatchMean = mean(ems);
    const f1Mean = mean(f1s);
    const correct = runs.filter((run) => verdictOf(run)?.isCorrect === true).length;
    return {
      rollout: index + 1,
      questions: runs.length,
      correct,
      passAt1: perRolloutPass[index] ?? 0,
      // EM and F1 over the questions this rollout answered (a missing line has no prediction to compare).
      ...(exactMatchMean !== undefined ? { exactMatch: exactMatchMean } : {}),
      ...(f1Mean !== undefined ? { f1: f1Mean } : {}),
      ...costOf(runs, correct),
      ...cacheOf(runs),
    };
  });
  const correctRuns = perRollout.reduce((total, rollout) => total + rollout.correct, 0);
  const cost = costOf(input.rollouts.flat(), correctRuns);
  const metrics: EvaluationMetrics = {
    rollouts: rolloutCount,
    questions: questions.length,
    meanPassAt1: meanPassAt1(perRolloutPass),
    bestPassAt1: bestRollout(perRolloutPass),
    passAtAllRollouts: passAtAny(correctness),
    unbiasedPassAtK: unbiasedPassAtK(correctness, rolloutCount),
    perRollout,
    ...cost,
    ...cacheOf(input.rollouts.flat()),
  };

  const rows: QuestionRow[] = questions.map((question) => ({
    question,
    reference: references.get(question) ?? '',
    rollouts: byRollout.flatMap((runs): RolloutVerdict[] => {
      const run = runs.get(question);
      if (!run) return [];
      const verdict = verdictOf(run);
      return [
        {
          rollout: run.rollout,
          prediction: run.prediction,
          termination: run.termination,
          isCorrect: verdict?.isCorrect === true,
          judgement: verdict?.judgement ?? 'not scored',
          ...(verdict?.unparsed ? { unparsed: true } : {}),
          ...(verdict?.exactMatch !== undefined ? { exactMatch: verdict.exactMatch } : {}),
          ...(verdict?.f1 !== undefined ? { f1: verdict.f1 } : {}),
          ...(run.runId ? { runId: run.runId } : {}),
        },
      ];
    }),
  }));
  const missingRuns = questions.flatMap((question) =>
    byRollout.flatMap((runs, index) => (runs.has(question) ? [] : [{ question, rollout: index + 1 }])),
  );
  const allRuns = input.rollouts.flat();
  const unparsedVerdicts = allRuns.flatMap((run) => {
    const verdict = verdictOf(run);
    return verdict?.unparsed ? [{ question: run.question, rollout: run.rollout, text: verdict.judgement }] : [];
  });
  return {
    createdAt: input.createdAt,
    source: input.source,
    method: input.method,
    ...(input.judge ? { judge: input.judge } : {}),
    metrics,
    statistics: {
      all: trajectoryStatistics(allRuns),
      solved: trajectoryStatistics(allRuns.filter((run) => verdictOf(run)?.isCorrect === true)),
    },
    questions: rows,
    skipped: input.skipped ?? [],
    unparsedVerdicts,
    duplicates: input.duplicates ?? [],
    missingRuns,
    ...(input.judgeCalls ? { judgeCalls: input.judgeCalls } : {}),
    notes: input.notes ?? [],
    ...(input.webUiBase ? { webUiBase: input.webUiBase } : {}),
  };
}

/**
 * The line appended to summary.jsonl, in DeepResearch's shape (percentages rounded to 2
 * decimals, as its evaluation writes them): `overall.avg_pass_at_<k>`, `overall.best_pass_at_1`,
 * `overall.pass_at_<k>`, `individual.Round<i>_Pass@1`, and `statistics`.
 */
export function deepResearchSummaryLine(report: EvaluationReport): Record<string, unknown> {
  const k = report.metrics.rollouts;
  const percent = (value: number) => Math.round(value * 10_000) / 100;
  const statistics = report.statistics.all;
  const solved = report.statistics.solved;
  return {
    createdAt: report.createdAt,
    source: report.source,
    method: report.method,
    ...(report.judge ? { judge: report.judge } : {}),
    overall: {
      [`avg_pass_at_${k}`]: percent(report.metrics.meanPassAt1),
      best_pass_at_1: percent(report.metrics.bestPassAt1.passAt1),
      [`pass_at_${k}`]: percent(report.metrics.passAtAllRollouts),
    },
    individual: Object.fromEntries(
      report.metrics.perRollout.map((rollout) => [`Round${rollout.rollout}_Pass@1`, percent(rollout.passAt1)]),
    ),
    statistics: {
      questions: report.metrics.questions,
      runs: statistics.runs ?? statistics.modelCalls.count,
      terminations: statistics.terminations,
      termination_frequencies: statistics.terminationFrequencies ?? {},
      avg_tool_calls_per_question: statistics.toolCallsPerQuestion,
      avg_tool_calls_per_solved_question: solved.toolCallsPerQuestion,
      avg_model_calls: statistics.modelCalls.mean,
      avg_model_calls_solved: solved.modelCalls.mean,
      avg_tokens: statistics.tokens.mean,
      avg_duration_ms: statistics.durationsMs.mean,
      avg_answer_length: statistics.answerLengths.mean,
      unbiased_pass_at_k: Object.fromEntries(
        Object.entries(report.metrics.unbiasedPassAtK).map(([key, value]) => [key, percent(value)]),
      ),
      unparsed_verdicts: report.unparsedVerdicts.length,
      skipped_lines: report.skipped.length,
    },
  };
}
