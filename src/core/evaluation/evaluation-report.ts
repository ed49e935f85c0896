import type { CacheFigures } from '../cache-figures';
import type { CostFigures } from '../cost-figures';

/**
 * The evaluation report: what `report.json` holds and what `report.html` and `eval compare`
 * render. Workflow-safe (plain data). Metrics are over unique questions and named for what
 * they are: `meanPassAt1` is the mean of the rollouts' pass@1, not "pass@k".
 */

/** How each prediction was scored. */
export type ScoringMethod = 'exact_match' | 'judge';

/** One rollout's score over the unique questions it answered. */
export interface RolloutScore {
  /** 1-based rollout number (iter<k>.jsonl). */
  rollout: number;
  /** Unique questions scored in this rollout. */
  questions: number;
  correct: number;
  /** correct / questions (0..1). */
  passAt1: number;
  /** Mean exact match (0..1), when reference answers exist. */
  exactMatch?: number;
  /** Mean token F1 (0..1), when reference answers exist. */
  f1?: number;
  /**
   * What this rollout's runs cost (their lines' `usage.costUsd`), per rollout (per run) and per
   * correct answer; absent when no run had a price, `perCorrectAnswerUsd` absent when none was correct.
   */
  cost?: CostFigures;
  /** The prompt cache hit rate of this rollout's runs and what caching saved them; absent when no run reported cache tokens. */
  cache?: CacheFigures;
}

/** Headline metrics over the rollouts. */
export interface EvaluationMetrics {
  rollouts: number;
  /** Unique questions across all rollouts. */
  questions: number;
  /** Mean over rollouts of pass@1 (DeepResearch's "Avg. Pass@k"). */
  meanPassAt1: number;
  /** The best rollout's pass@1 and its number. */
  bestPassAt1: { rollout: number; passAt1: number };
  /** Share of questions answered correctly by at least one of the k rollouts (k = rollouts). */
  passAtAllRollouts: number;
  /** Unbiased pass@k estimator (Chen et al. 2021) for each k from 1 to rollouts: key is k. */
  unbiasedPassAtK: Record<string, number>;
  perRollout: RolloutScore[];
  /** The same cost figures over every rollout's runs (correct answers summed over the rollouts); absent when no run had a price. */
  cost?: CostFigures;
  /** The same cache figures over every rollout's runs; absent when no run reported cache tokens. */
  cache?: CacheFigures;
}

/** Distribution of a number over runs (model calls, tokens, durations, answer lengths). */
export interface Distribution {
  count: number;
  mean: number;
  median: number;
  min: number;
  max: number;
  /** The raw values, for histograms. */
  values: number[];
}

/** Trajectory statistics over all runs, and the same over correctly solved ones. */
export interface TrajectoryStatistics {
  /** Runs these statistics are over. */
  runs?: number;
  /** Count of runs by termination (answer, max_calls, token_limit, timeout, error, ...). */
  terminations: Record<string, number>;
  /** Share of runs by termination (count / runs, 0..1). */
  terminationFrequencies?: Record<string, number>;
  /** Tool calls per question by tool name (mean over runs), parsed from transcripts. */
  toolCallsPerQuestion: Record<string, number>;
  /** Tool calls by tool name, summed over the runs. */
  toolCallTotals?: Record<string, number>;
  /** Tool calls of all tools per run. */
  toolCalls?: Distribution;
  modelCalls: Distribution;
  tokens: Distribution;
  durationsMs: Distribution;
  answerLengths: Distribution;
}

/** One rollout's answer to one question. */
export interface RolloutVerdict {
  rollout: number;
  prediction: string;
  termination: string;
  isCorrect: boolean;
  /** The judge's verdict text (or 'exact_match'), and whether it could not be parsed. */
  judgement: string;
  unparsed?: boolean;
  exactMatch?: number;
  f1?: number;
  /** Workflow id of the run, when known (for a link to the Web UI). */
  runId?: string;
}

/** A row of the per-question table. */
export interface QuestionRow {
  question: string;
  reference: string;
  rollouts: RolloutVerdict[];
}

/** Everything an evaluation produced: `report.json`. */
export interface EvaluationReport {
  /** When the evaluation was made (ISO time) and what it evaluated. */
  createdAt: string;
  source: { paths: string[]; batchId?: string };
  method: ScoringMethod;
  /** The judge's name (gaia, browsecomp, a prompt file) and model, when a judge was used. */
  judge?: { name: string; model: string; promptHash: string };
  metrics: EvaluationMetrics;
  statistics: { all: TrajectoryStatistics; solved: TrajectoryStatistics };
  questions: QuestionRow[];
  /** Lines skipped (no question, error lines) and verdicts that did not parse, listed. */
  skipped: Array<{ file: string; line: number; reason: string }>;
  unparsedVerdicts: Array<{ question: string; rollout: number; text: string }>;
  /** Lines dropped because their question had a later (or better) line in the same rollout file, per rollout. */
  duplicates?: Array<{ rollout: number; lines: number }>;
  /**
   * (question, rollout) pairs with no line: the rollout files cover different question sets.
   * Every metric's denominator is the union of unique questions, so a missing pair counts as
   * not correct in that rollout.
   */
  missingRuns?: Array<{ question: string; rollout: number }>;
  /** Judge calls this evaluation made, and verdicts it found already stored (judge only). */
  judgeCalls?: { made: number; stored: number };
  /** Why EM/F1 or the judge were not computed (e.g. no reference answers), for people. */
  notes?: string[];
  /** Web UI base address for run links, when known (e.g. http://localhost:8233/namespaces/default). */
  webUiBase?: string;
}
