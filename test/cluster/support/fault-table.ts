/** One injected fault: when (seconds after the chaos began), how long the part stayed down, how long until Temporal served again after it was restored. */
export interface FaultRecord {
  fault: string;
  at: number;
  downSeconds: number;
  recoverySeconds: number;
  /** Seconds from the restore until the model server received a call again (NaN: not within 3 minutes). */
  resumedSeconds: number;
  /** Model calls answered before the fault (progress marker). */
  modelCallsBefore: number;
  /** Runs not yet closed when the fault began. */
  runsInFlight: number;
  /** What of the batch was in flight while the part was down (its runs, its evaluation), when the test ran one. */
  batch?: string;
}

export interface ChaosOutcome {
  runs: Array<{ id: string; ok: boolean; closedAt?: number }>;
  /** Seconds after the chaos began when the last fault was restored. */
  faultsDone: number;
  modelCalls: number;
}

function table(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The table the cluster tier prints at the end: each fault, when, for how long, the recovery (and what of a batch it hit); then how the runs ended. */
export function formatFaultTable(faults: FaultRecord[], outcome: ChaosOutcome): string {
  const withBatch = faults.some((fault) => fault.batch !== undefined);
  const faultRows = [
    [
      'fault',
      'at (s)',
      'down (s)',
      'serving after restore (s)',
      'model calls resumed after (s)',
      'runs in flight',
      'model calls before',
      ...(withBatch ? ['batch in flight'] : []),
    ],
    ...faults.map((fault) => [
      fault.fault,
      fault.at.toFixed(1),
      fault.downSeconds.toFixed(1),
      fault.recoverySeconds.toFixed(1),
      Number.isFinite(fault.resumedSeconds) ? fault.resumedSeconds.toFixed(1) : 'no',
      String(fault.runsInFlight),
      String(fault.modelCallsBefore),
      ...(withBatch ? [fault.batch ?? ''] : []),
    ]),
  ];
  const completed = outcome.runs.filter((run) => run.ok);
  const closed = completed.map((run) => run.closedAt ?? 0).sort((a, b) => a - b);
  return [
    table(faultRows),
    '',
    `runs: ${completed.length}/${outcome.runs.length} completed` +
      (closed.length
        ? `, closed between ${closed[0]?.toFixed(1)} s and ${closed[closed.length - 1]?.toFixed(1)} s (faults over at ${outcome.faultsDone.toFixed(1)} s)`
        : '') +
      `; model calls answered: ${outcome.modelCalls}`,
    ...outcome.runs.filter((run) => !run.ok).map((run) => `  not completed: ${run.id}`),
  ].join('\n');
}
