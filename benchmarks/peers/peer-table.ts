/**
 * The pure part of `npm run benchmark:peers`: from what was measured (wall times, CPU seconds,
 * history figures) to the figures of the table (per-step overhead over the bare loop, CPU per
 * model call, history per run) and the table itself, one row per system, and which system is
 * lowest in each column.
 */

/** What one run's history says. */
export interface RunHistory {
  /** Events in the run's history. */
  events: number;
  /** The history's size serialized as protobuf (what the server stores and sends), in bytes. */
  bytes: number;
  /** ActivityTaskScheduled events. */
  activities: number;
  /** WorkflowTaskStarted events. */
  workflowTasks: number;
}

/** One system at one model latency: its runs, one after another, and the CPU they took. */
export interface LatencyMeasurement {
  latencyMs: number;
  /** Wall time of each run, client start to result, in ms. */
  wallMs: number[];
  /** Wall time of each bare loop (the same run without Temporal) at this latency, in ms. */
  bareMs: number[];
  /** CPU seconds of the system's worker process over all its runs at this latency. */
  workerCpuSeconds: number;
  /** CPU seconds of the Temporal dev server over those runs. */
  serverCpuSeconds: number;
  histories: RunHistory[];
}

/** One row of the table: a system at one number of model calls, at every latency measured. */
export interface SystemMeasurement {
  /** The row's label, e.g. `OpenAI Agents SDK + Temporal plugin (temporalio-openai-agents 1.1.0)`. */
  system: string;
  /** Model calls per run (calls − 1 tool calls, then an answer). */
  calls: number;
  latencies: LatencyMeasurement[];
}

/** The figures of one row, in the table's units. */
export interface RowFigures {
  /** Per latency: (median run − median bare loop) / calls, in ms. */
  overheadPerStepMs: number[];
  /** Per latency: worker CPU ms per model call. */
  workerCpuPerCallMs: number[];
  /** Per latency: server CPU ms per model call. */
  serverCpuPerCallMs: number[];
  /** Medians over every run. */
  historyEvents: number;
  historyBytes: number;
  activities: number;
  workflowTasks: number;
}

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The row's figures from its measurements. */
export function rowFigures(measurement: SystemMeasurement): RowFigures {
  const { calls, latencies } = measurement;
  const histories = latencies.flatMap((latency) => latency.histories);
  const perCall = (seconds: number, runs: number) => (runs === 0 ? Number.NaN : (seconds * 1000) / (runs * calls));
  return {
    overheadPerStepMs: latencies.map((latency) => (median(latency.wallMs) - median(latency.bareMs)) / calls),
    workerCpuPerCallMs: latencies.map((latency) => perCall(latency.workerCpuSeconds, latency.wallMs.length)),
    serverCpuPerCallMs: latencies.map((latency) => perCall(latency.serverCpuSeconds, latency.wallMs.length)),
    historyEvents: median(histories.map((history) => history.events)),
    historyBytes: median(histories.map((history) => history.bytes)),
    activities: median(histories.map((history) => history.activities)),
    workflowTasks: median(histories.map((history) => history.workflowTasks)),
  };
}

/** `26 ms`, or `26–31 ms` when the values round apart (CPU per call over the latencies). */
export function formatRange(values: readonly number[], unit = 'ms'): string {
  const rounded = values.filter((value) => Number.isFinite(value)).map((value) => Math.round(value));
  if (rounded.length === 0) return '—';
  const low = Math.min(...rounded);
  const high = Math.max(...rounded);
  return low === high ? `${low} ${unit}` : `${low}–${high} ${unit}`;
}

/** `95 / 56 ms`: one figure per latency, in the order measured. */
export function formatPerLatency(values: readonly number[]): string {
  return `${values.map((value) => (Number.isFinite(value) ? Math.round(value) : '—')).join(' / ')} ms`;
}

/** `42 KB` (1,000 bytes), `1.2 MB` from 1,000 KB on. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  return bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.round(bytes / 1000)} KB`;
}

/** The table's column headings, for `latencies` (ms) in the order measured. */
export function tableHeadings(latencies: readonly number[]): string[] {
  return [
    '',
    `per-step overhead, ${latencies.join(' / ')} ms model`,
    'worker CPU per call',
    'server CPU per call',
    'history events / bytes per run',
    'activities / workflow tasks per run',
  ];
}

/** One row's cells, in the order of {@link tableHeadings}. */
export function rowCells(system: string, figures: RowFigures): string[] {
  return [
    system,
    formatPerLatency(figures.overheadPerStepMs),
    formatRange(figures.workerCpuPerCallMs),
    formatRange(figures.serverCpuPerCallMs),
    `${Math.round(figures.historyEvents)} / ${formatBytes(figures.historyBytes)}`,
    `${Math.round(figures.activities)} / ${Math.round(figures.workflowTasks)}`,
  ];
}

/** A Markdown table (as docs/figures.md holds it): headings, then one row per system. */
export function markdownTable(headings: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headings), line(headings.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * Per figure, whether the row `ours` is strictly below every peer: the overhead and both CPUs at
 * each latency, history events, history bytes. `undefined` when there is no peer row.
 */
export function oursLowest(
  rows: readonly { system: string; figures: RowFigures }[],
  ours: string,
): Record<'overhead' | 'worker CPU' | 'server CPU' | 'history events' | 'history bytes', boolean> | undefined {
  const mine = rows.find((row) => row.system === ours)?.figures;
  const peers = rows.filter((row) => row.system !== ours).map((row) => row.figures);
  if (!mine || peers.length === 0) return undefined;
  const lowest = (pick: (figures: RowFigures) => readonly number[]) =>
    pick(mine).every((value, index) => peers.every((peer) => value < (pick(peer)[index] ?? Number.POSITIVE_INFINITY)));
  return {
    overhead: lowest((figures) => figures.overheadPerStepMs),
    'worker CPU': lowest((figures) => figures.workerCpuPerCallMs),
    'server CPU': lowest((figures) => figures.serverCpuPerCallMs),
    'history events': lowest((figures) => [figures.historyEvents]),
    'history bytes': lowest((figures) => [figures.historyBytes]),
  };
}

/** `Pydantic AI: 3.9×`: each peer's history bytes per run over ours, for the "≥ 10× smaller at 100 calls" target. */
export function historyRatios(rows: readonly { system: string; figures: RowFigures }[], ours: string): string[] {
  const mine = rows.find((row) => row.system === ours)?.figures.historyBytes;
  if (!mine) return [];
  return rows
    .filter((row) => row.system !== ours)
    .map((row) => `${row.system}: ${(row.figures.historyBytes / mine).toFixed(1)}×`);
}

/**
 * The fewest events a history of `activities` activities and `workflowTasks` workflow tasks can
 * have: started and closed, and three events each (scheduled, started, completed).
 */
export function historyEventFloor(activities: number, workflowTasks: number): number {
  return 2 + 3 * activities + 3 * workflowTasks;
}

/** `ours: 125 = 119 + 6`: each row's history events over the floor of its activities and workflow tasks ({@link historyEventFloor}). */
export function eventsOverFloor(rows: readonly { system: string; figures: RowFigures }[]): string[] {
  return rows.map(({ system, figures }) => {
    const floor = historyEventFloor(figures.activities, figures.workflowTasks);
    return `${system}: ${figures.historyEvents} = ${floor} + ${figures.historyEvents - floor}`;
  });
}

/** The calls from which issue 34 asks every peer's history to be at least 10× ours. */
export const TENFOLD_HISTORY_FROM_CALLS = 100;

/**
 * What keeps ours from issue 34's target at `calls`: each figure in which it is not below every
 * peer ({@link oursLowest}), and from {@link TENFOLD_HISTORY_FROM_CALLS} calls each peer whose
 * history is less than 10× ours. Empty when the target is met (or there is no peer to compare).
 */
export function targetShortfalls(
  rows: readonly { system: string; figures: RowFigures }[],
  ours: string,
  calls: number,
): string[] {
  const verdict = oursLowest(rows, ours);
  const mine = rows.find((row) => row.system === ours)?.figures.historyBytes;
  if (!verdict || mine === undefined) return [];
  const shortfalls = Object.entries(verdict)
    .filter(([, lowest]) => !lowest)
    .map(([figure]) => `${figure} not lowest`);
  if (calls >= TENFOLD_HISTORY_FROM_CALLS)
    for (const row of rows)
      if (row.system !== ours && row.figures.historyBytes < 10 * mine)
        shortfalls.push(`${row.system}'s history ${(row.figures.historyBytes / mine).toFixed(1)}× ours, not 10×`);
  return shortfalls;
}
