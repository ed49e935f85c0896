/** One thing the chaos test checks at the end: what, whether it held, what was counted, and what broke it. */
export interface InvariantCheck {
  invariant: string;
  /** What was counted when it held (e.g. `18 runs: answer 18`). */
  detail: string;
  /** Empty when it held. */
  problems: string[];
}

/**
 * The table printed at the end of the chaos test: one row per invariant, `yes` or `NO`, and the
 * detail; under it, the problems of each that did not hold (the first 10 each).
 */
export function formatInvariantTable(checks: readonly InvariantCheck[]): string {
  const rows = [
    ['invariant', 'held', 'detail'],
    ...checks.map((check) => [check.invariant, check.problems.length === 0 ? 'yes' : 'NO', check.detail]),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const lines = rows.map((row) =>
    `${(row[0] ?? '').padEnd(widths[0] ?? 0)}  ${(row[1] ?? '').padEnd(widths[1] ?? 0)}  ${row[2] ?? ''}`.trimEnd(),
  );
  for (const check of checks) {
    if (check.problems.length === 0) continue;
    lines.push('', `${check.invariant}:`, ...check.problems.slice(0, 10).map((problem) => `  ${problem}`));
    if (check.problems.length > 10) lines.push(`  … and ${check.problems.length - 10} more`);
  }
  return lines.join('\n');
}
