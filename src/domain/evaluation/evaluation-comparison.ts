import type { EvaluationReport, QuestionRow } from '../../core/evaluation/evaluation-report';

/**
 * `eval compare`: what changed from evaluation A (the baseline, e.g. last night) to evaluation B
 * (the candidate). Plain data, built by the pure `compareEvaluations`.
 *
 * A question is **right** in an evaluation when the majority of its rollouts there are correct
 * (more than half: 1 of 1, 2 of 3, 2 of 2; not 1 of 2). It **flipped** when it is right in one
 * evaluation and wrong in the other; only questions present in both count. Questions whose share
 * of correct rollouts changed without flipping are listed in `shareChanged`.
 */
export interface EvaluationComparison {
  /** What was compared: each side's creation time, source, scoring method and judge. */
  a: ComparedEvaluation;
  b: ComparedEvaluation;
  /** Headline metrics, in a fixed order, each with both values and `delta = b - a`. */
  metrics: MetricDelta[];
  /** Right in A, wrong in B (regressions). */
  rightToWrong: FlippedQuestion[];
  /** Wrong in A, right in B (improvements). */
  wrongToRight: FlippedQuestion[];
  /** In both, same side of the majority line, but a different share of correct rollouts. */
  shareChanged: FlippedQuestion[];
  /** Run counts and frequencies by termination in A and B, every termination seen in either. */
  terminationShifts: TerminationShift[];
  /** Questions evaluated in only one of the two (exact question text). */
  onlyInA: string[];
  onlyInB: string[];
  /** Questions in both. */
  commonQuestions: number;
}

/** One side of a comparison. */
export interface ComparedEvaluation {
  createdAt: string;
  source: { paths: string[]; batchId?: string };
  method: EvaluationReport['method'];
  judge?: EvaluationReport['judge'];
  rollouts: number;
  questions: number;
}

/** A named metric in both evaluations. `delta` is `b - a` (positive: B is higher). */
export interface MetricDelta {
  /** Exact metric name, e.g. `mean_pass_at_1`, `pass_at_3_any`, `unbiased_pass_at_2`, `round1_pass_at_1`. */
  name: string;
  /** Value in A or B; undefined when that evaluation does not have this metric (e.g. fewer rollouts). */
  a?: number;
  b?: number;
  delta?: number;
}

/** A question present in both evaluations, with its correct rollouts on each side. */
export interface FlippedQuestion {
  question: string;
  reference: string;
  a: QuestionOutcome;
  b: QuestionOutcome;
}

/** How one evaluation did on one question. */
export interface QuestionOutcome {
  correctRollouts: number;
  rollouts: number;
  /** correctRollouts / rollouts (0..1). */
  share: number;
  /** Majority of rollouts correct. */
  right: boolean;
  /** The predictions, in rollout order. */
  predictions: string[];
}

/** A termination's run count and frequency (count / runs) in A and B. */
export interface TerminationShift {
  termination: string;
  a: number;
  b: number;
  aFrequency: number;
  bFrequency: number;
  /** b - a, in runs. */
  delta: number;
  /** bFrequency - aFrequency. */
  frequencyDelta: number;
}

function outcomeOf(row: QuestionRow): QuestionOutcome {
  const rollouts = row.rollouts.length;
  const correctRollouts = row.rollouts.filter((verdict) => verdict.isCorrect).length;
  return {
    correctRollouts,
    rollouts,
    share: rollouts === 0 ? 0 : correctRollouts / rollouts,
    right: correctRollouts * 2 > rollouts,
    predictions: row.rollouts.map((verdict) => verdict.prediction),
  };
}

/** The named headline metrics of a report, in display order. */
export function namedMetrics(report: EvaluationReport): Array<{ name: string; value: number }> {
  const metrics = report.metrics;
  const named: Array<{ name: string; value: number }> = [
    { name: 'questions', value: metrics.questions },
    { name: 'rollouts', value: metrics.rollouts },
    { name: 'mean_pass_at_1', value: metrics.meanPassAt1 },
    { name: 'best_pass_at_1', value: metrics.bestPassAt1.passAt1 },
    { name: `pass_at_${metrics.rollouts}_any`, value: metrics.passAtAllRollouts },
  ];
  const ks = Object.keys(metrics.unbiasedPassAtK)
    .map(Number)
    .sort((x, y) => x - y);
  for (const k of ks) named.push({ name: `unbiased_pass_at_${k}`, value: metrics.unbiasedPassAtK[String(k)] ?? 0 });
  for (const rollout of metrics.perRollout) {
    named.push({ name: `round${rollout.rollout}_pass_at_1`, value: rollout.passAt1 });
    if (rollout.exactMatch !== undefined)
      named.push({ name: `round${rollout.rollout}_exact_match`, value: rollout.exactMatch });
    if (rollout.f1 !== undefined) named.push({ name: `round${rollout.rollout}_f1`, value: rollout.f1 });
  }
  return named;
}

function compared(report: EvaluationReport): ComparedEvaluation {
  return {
    createdAt: report.createdAt,
    source: report.source,
    method: report.method,
    ...(report.judge ? { judge: report.judge } : {}),
    rollouts: report.metrics.rollouts,
    questions: report.metrics.questions,
  };
}

/** Compares two evaluations: metric deltas, flipped questions, termination shifts. Pure. */
export function compareEvaluations(a: EvaluationReport, b: EvaluationReport): EvaluationComparison {
  const aMetrics = namedMetrics(a);
  const bMetrics = namedMetrics(b);
  const names: string[] = [];
  for (const metric of [...aMetrics, ...bMetrics]) if (!names.includes(metric.name)) names.push(metric.name);
  const metrics: MetricDelta[] = names.map((name) => {
    const aValue = aMetrics.find((metric) => metric.name === name)?.value;
    const bValue = bMetrics.find((metric) => metric.name === name)?.value;
    return {
      name,
      ...(aValue !== undefined ? { a: aValue } : {}),
      ...(bValue !== undefined ? { b: bValue } : {}),
      ...(aValue !== undefined && bValue !== undefined ? { delta: bValue - aValue } : {}),
    };
  });

  const bRows = new Map(b.questions.map((row) => [row.question, row]));
  const aQuestions = new Set(a.questions.map((row) => row.question));
  const rightToWrong: FlippedQuestion[] = [];
  const wrongToRight: FlippedQuestion[] = [];
  const shareChanged: FlippedQuestion[] = [];
  let commonQuestions = 0;
  for (const aRow of a.questions) {
    const bRow = bRows.get(aRow.question);
    if (!bRow) continue;
    commonQuestions += 1;
    const entry: FlippedQuestion = {
      question: aRow.question,
      reference: aRow.reference || bRow.reference,
      a: outcomeOf(aRow),
      b: outcomeOf(bRow),
    };
    if (entry.a.right && !entry.b.right) rightToWrong.push(entry);
    else if (!entry.a.right && entry.b.right) wrongToRight.push(entry);
    else if (entry.a.share !== entry.b.share) shareChanged.push(entry);
  }

  const aTerminations = a.statistics.all.terminations;
  const bTerminations = b.statistics.all.terminations;
  const aRuns = Object.values(aTerminations).reduce((sum, count) => sum + count, 0);
  const bRuns = Object.values(bTerminations).reduce((sum, count) => sum + count, 0);
  const terminations = [...new Set([...Object.keys(aTerminations), ...Object.keys(bTerminations)])].sort();
  const terminationShifts = terminations.map((termination): TerminationShift => {
    const aCount = aTerminations[termination] ?? 0;
    const bCount = bTerminations[termination] ?? 0;
    const aFrequency = aRuns === 0 ? 0 : aCount / aRuns;
    const bFrequency = bRuns === 0 ? 0 : bCount / bRuns;
    return {
      termination,
      a: aCount,
      b: bCount,
      aFrequency,
      bFrequency,
      delta: bCount - aCount,
      frequencyDelta: bFrequency - aFrequency,
    };
  });

  return {
    a: compared(a),
    b: compared(b),
    metrics,
    rightToWrong,
    wrongToRight,
    shareChanged,
    terminationShifts,
    onlyInA: a.questions.filter((row) => !bRows.has(row.question)).map((row) => row.question),
    onlyInB: b.questions.filter((row) => !aQuestions.has(row.question)).map((row) => row.question),
    commonQuestions,
  };
}
