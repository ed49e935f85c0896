import { describeCache } from '../core/cache-figures';
import { describeCost } from '../core/cost-figures';
import type { EvaluationComparison } from '../domain/evaluation/evaluation-comparison';
import { namedMetrics } from '../domain/evaluation/evaluation-comparison';
import type { EvaluationReport } from '../core/evaluation/evaluation-report';

/** A share as a percentage with two decimals ("66.67%"); counts stay whole. */
function formatValue(name: string, value: number | undefined): string {
  if (value === undefined) return '-';
  if (name === 'questions' || name === 'rollouts') return String(value);
  return `${(value * 100).toFixed(2)}%`;
}

function signed(name: string, value: number | undefined): string {
  if (value === undefined) return '-';
  if (name === 'questions' || name === 'rollouts') return `${value >= 0 ? '+' : ''}${value}`;
  return `${value >= 0 ? '+' : ''}${(value * 100).toFixed(2)} pt`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  '),
    )
    .join('\n');
}

/** The headline table `react-agent eval` prints at the end. */
export function headlineTable(report: EvaluationReport): string {
  const method =
    report.method === 'judge' && report.judge
      ? `judge ${report.judge.name} (model ${report.judge.model})`
      : 'exact match';
  const lines = [
    `Evaluation of ${report.metrics.questions} unique questions × ${report.metrics.rollouts} rollout${report.metrics.rollouts === 1 ? '' : 's'}, scored by ${method}`,
    '',
  ];
  const rows = [['METRIC', 'VALUE']];
  for (const metric of namedMetrics(report)) {
    const note =
      metric.name === 'best_pass_at_1'
        ? ` (rollout ${report.metrics.bestPassAt1.rollout})`
        : metric.name === 'mean_pass_at_1'
          ? ` (Avg. Pass@${report.metrics.rollouts})`
          : '';
    rows.push([metric.name, `${formatValue(metric.name, metric.value)}${note}`]);
  }
  lines.push(table(rows));
  const terminations = Object.entries(report.statistics.all.terminations)
    .sort(([, left], [, right]) => right - left)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
  lines.push('', `terminations: ${terminations || 'none'}`);
  lines.push(`cost: ${describeCost(report.metrics.cost)}`);
  if (report.metrics.cost)
    for (const rollout of report.metrics.perRollout)
      lines.push(`  rollout ${rollout.rollout}: ${describeCost(rollout.cost)}`);
  if (report.metrics.cache) {
    lines.push(`prompt cache: ${describeCache(report.metrics.cache)}`);
    if (report.metrics.perRollout.length > 1)
      for (const rollout of report.metrics.perRollout)
        lines.push(`  rollout ${rollout.rollout}: ${describeCache(rollout.cache)}`);
  }
  if (report.unparsedVerdicts.length)
    lines.push(`unparsed verdicts (counted as not correct): ${report.unparsedVerdicts.length}`);
  if (report.skipped.length) lines.push(`skipped lines: ${report.skipped.length}`);
  if (report.missingRuns?.length)
    lines.push(`missing (question, rollout) pairs (counted as not correct): ${report.missingRuns.length}`);
  if (report.judgeCalls)
    lines.push(`judge calls: ${report.judgeCalls.made} made, ${report.judgeCalls.stored} verdicts already stored`);
  for (const note of report.notes ?? []) lines.push(note);
  return lines.join('\n');
}

/** What `react-agent eval compare` prints. */
export function comparisonText(comparison: EvaluationComparison, labels: { a: string; b: string }): string {
  const lines = [
    `A: ${labels.a}`,
    `B: ${labels.b}`,
    `${comparison.commonQuestions} questions in both; ${comparison.onlyInA.length} only in A, ${comparison.onlyInB.length} only in B`,
    '',
  ];
  const rows = [['METRIC', 'A', 'B', 'DELTA (B - A)']];
  for (const metric of comparison.metrics)
    rows.push([
      metric.name,
      formatValue(metric.name, metric.a),
      formatValue(metric.name, metric.b),
      signed(metric.name, metric.delta),
    ]);
  lines.push(table(rows), '');
  const flipped = (title: string, entries: EvaluationComparison['rightToWrong']) => {
    lines.push(`${title}: ${entries.length}`);
    for (const entry of entries)
      lines.push(
        `  ${entry.question}  (A ${entry.a.correctRollouts}/${entry.a.rollouts}, B ${entry.b.correctRollouts}/${entry.b.rollouts}; reference: ${entry.reference})`,
      );
  };
  flipped('right → wrong', comparison.rightToWrong);
  flipped('wrong → right', comparison.wrongToRight);
  lines.push('', 'terminations (runs: A → B)');
  const shifts = [['TERMINATION', 'A', 'B', 'DELTA']];
  for (const shift of comparison.terminationShifts) {
    shifts.push([
      shift.termination,
      `${shift.a} (${(shift.aFrequency * 100).toFixed(1)}%)`,
      `${shift.b} (${(shift.bFrequency * 100).toFixed(1)}%)`,
      `${shift.delta >= 0 ? '+' : ''}${shift.delta}`,
    ]);
  }
  lines.push(table(shifts));
  return lines.join('\n');
}
