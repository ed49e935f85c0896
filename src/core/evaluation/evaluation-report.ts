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
  /** Count of runs by termination (answer, max_calls, token_limit, timeout, error, ...). */
  terminations: Record<string, number>;
  /** Tool calls per question by tool name (mean over runs), parsed from transcripts. */
  toolCallsPerQuestion: Record<string, number>;
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
  /** Web UI base address for run links, when known (e.g. http://localhost:8233/namespaces/default). */
  webUiBase?: string;
}
