/**
 * What runs cost, summed and divided the ways a batch summary and an evaluation report show it
 * (issue 19): the total, the cost per rollout (one run of one question: one line of an iter
 * file) and the cost per correct answer. Runs whose model had no price have no cost; figures over
 * runs none of which had one are absent (shown "—"), never 0. Workflow-safe: pure functions.
 */

/** Cost figures of a set of runs. Present only when at least one of them had a cost. */
export interface CostFigures {
  /** What the runs with a cost cost altogether, in USD. */
  totalUsd: number;
  /** Runs the figures are over, and those of them that had a cost (the others' models had no price). */
  runs: number;
  pricedRuns: number;
  /** `totalUsd` / `runs`: what one rollout (one run of one question) cost on average. */
  perRolloutUsd: number;
  /** Correct answers among the runs, when known (an evaluation scored them). */
  correct?: number;
  /** `totalUsd` / `correct`: what one correct answer cost; absent when none was correct or correctness is unknown. */
  perCorrectAnswerUsd?: number;
}

/**
 * The cost figures of runs, from each run's cost (undefined: its model had no price) and, when
 * known, how many of them were correct. Undefined when no run had a cost (or there are no runs).
 */
export function costFigures(costs: ReadonlyArray<number | undefined>, correct?: number): CostFigures | undefined {
  const priced = costs.filter((cost): cost is number => typeof cost === 'number' && Number.isFinite(cost));
  if (!costs.length || !priced.length) return undefined;
  const totalUsd = priced.reduce((sum, cost) => sum + cost, 0);
  return {
    totalUsd,
    runs: costs.length,
    pricedRuns: priced.length,
    perRolloutUsd: totalUsd / costs.length,
    ...(correct !== undefined ? { correct } : {}),
    ...(correct !== undefined && correct > 0 ? { perCorrectAnswerUsd: totalUsd / correct } : {}),
  };
}

/**
 * The cost figures of runs known only by their summed cost and count (a batch keeps counts, not
 * each run's cost): `totalUsd` undefined when none had a cost. Every run is counted as priced,
 * since a batch's runs share their model.
 */
export function costFiguresOfTotal(
  totalUsd: number | undefined,
  runs: number,
  correct?: number,
): CostFigures | undefined {
  if (totalUsd === undefined || !Number.isFinite(totalUsd) || runs <= 0) return undefined;
  return {
    totalUsd,
    runs,
    pricedRuns: runs,
    perRolloutUsd: totalUsd / runs,
    ...(correct !== undefined ? { correct } : {}),
    ...(correct !== undefined && correct > 0 ? { perCorrectAnswerUsd: totalUsd / correct } : {}),
  };
}

/**
 * A cost in USD for people: `—` when there is none (no price), `$0` for nothing spent, two decimals
 * from a dollar up (`$12.35`), four significant digits below (`$0.004200`, `$0.1235`).
 */
export function formatUsd(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  if (value === 0) return '$0';
  const magnitude = Math.abs(value);
  const decimals = magnitude >= 1 ? 2 : Math.min(12, Math.max(2, 3 - Math.floor(Math.log10(magnitude))));
  return `${value < 0 ? '-' : ''}$${magnitude.toFixed(decimals)}`;
}

/**
 * One line for people: `$0.1200 in all · $0.03000 per rollout · $0.06000 per correct answer`. Per
 * correct answer is `—` when correctness is known but nothing was correct, and left out when it is
 * unknown (no evaluation). No figures at all (no run had a price): `—`.
 */
export function describeCost(cost: CostFigures | undefined): string {
  if (!cost) return '—';
  const parts = [`${formatUsd(cost.totalUsd)} in all`, `${formatUsd(cost.perRolloutUsd)} per rollout`];
  if (cost.correct !== undefined) parts.push(`${formatUsd(cost.perCorrectAnswerUsd)} per correct answer`);
  const unpriced = cost.runs - cost.pricedRuns;
  if (unpriced > 0) parts.push(`${unpriced} of ${cost.runs} runs without a price`);
  return parts.join(' · ');
}
