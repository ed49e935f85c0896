import { costFiguresOfTotal, type CostFigures } from './cost-figures';
import { addUsage, ZERO_USAGE, type TokenUsage } from './messages';
import { TERMINATIONS, type Termination } from './termination';

/**
 * A batch's counts and the progress maths on them, workflow-safe. The batch keeps only these
 * counts (never results); they travel through continue-as-new and answer the `progress` query.
 */

/** Counts of one rollout. */
export interface RolloutCounts {
  /** Runs this batch started (running, returned and failed ones). */
  started: number;
  running: number;
  /** Runs that returned a result, by termination, and lines kept from an earlier batch. */
  terminations: Partial<Record<Termination, number>>;
  /** Runs that failed instead of returning a result (their lines end `error`). */
  failed: number;
  /** Pairs skipped by `--resume`: their earlier line did not end `error`. */
  kept: number;
  /** Tokens of this batch's runs. */
  usage: TokenUsage;
  /** Summed and longest duration of this batch's runs, workflow time. */
  durationMs: number;
  maxDurationMs: number;
}

/** One rollout in a batch's summary (summary.json, the batch's result). */
export interface RolloutSummary {
  rollout: number;
  /** Runs that returned a result, by termination, kept lines included. */
  terminations: Partial<Record<Termination, number>>;
  /** Runs that failed instead of returning a result (their lines end `error`). */
  failed: number;
  /** Lines kept from an earlier batch (`--resume`). */
  kept: number;
  /** Pairs without a line (cancelled before they started). */
  notRun: number;
  /** Tokens and durations of this batch's runs (kept lines not included). */
  usage: TokenUsage;
  durationMs: { total: number; mean: number; max: number };
  /**
   * What this batch's runs of the rollout cost (`usage.costUsd`) and per rollout, i.e. per run
   * (kept lines not included); absent when no run had a price. Per correct answer is the
   * evaluation's (`evaluation.headline.cost`), since only it knows which answers are correct.
   */
  cost?: CostFigures;
}

/** Per rollout, index rollout − 1. */
export interface BatchCounts {
  rollouts: RolloutCounts[];
}

export function emptyBatchCounts(rollouts: number): BatchCounts {
  return {
    rollouts: Array.from({ length: rollouts }, () => ({
      started: 0,
      running: 0,
      terminations: {},
      failed: 0,
      kept: 0,
      usage: { ...ZERO_USAGE },
      durationMs: 0,
      maxDurationMs: 0,
    })),
  };
}

function rolloutOf(counts: BatchCounts, rollout: number): RolloutCounts {
  const found = counts.rollouts[rollout - 1];
  if (!found) throw new RangeError(`rollout ${rollout} is not in this batch (1 to ${counts.rollouts.length})`);
  return found;
}

export function recordStarted(counts: BatchCounts, rollout: number): void {
  const entry = rolloutOf(counts, rollout);
  entry.started += 1;
  entry.running += 1;
}

/** A started run ended: with its result's termination, usage and duration, or failed. */
export function recordFinished(
  counts: BatchCounts,
  rollout: number,
  outcome: { termination: Termination; usage?: TokenUsage; durationMs?: number } | { failed: true },
): void {
  const entry = rolloutOf(counts, rollout);
  entry.running -= 1;
  if ('failed' in outcome) {
    entry.failed += 1;
    return;
  }
  entry.terminations[outcome.termination] = (entry.terminations[outcome.termination] ?? 0) + 1;
  if (outcome.usage) entry.usage = addUsage(entry.usage, outcome.usage);
  const duration = outcome.durationMs ?? 0;
  entry.durationMs += duration;
  entry.maxDurationMs = Math.max(entry.maxDurationMs, duration);
}

/** A pair kept from an earlier batch (`--resume`), with the termination its line has. */
export function recordKept(counts: BatchCounts, rollout: number, termination: Termination): void {
  const entry = rolloutOf(counts, rollout);
  entry.kept += 1;
  entry.terminations[termination] = (entry.terminations[termination] ?? 0) + 1;
}

/** What the batch is doing. */
export type BatchState = 'starting' | 'running' | 'cancelling' | 'finishing' | 'finished';

/** The `progress` query's answer. */
export interface BatchProgress {
  batchId: string;
  name?: string;
  state: BatchState;
  output: string;
  questions: number;
  rollouts: number;
  concurrency: number;
  /** ISO time the batch started (workflow time). */
  startedAt: string;
  /** Workflow time of this answer (the batch's last step), ms since the epoch. */
  asOf: number;
  perRollout: Array<{
    rollout: number;
    queued: number;
    running: number;
    /** Runs that returned a result, by termination (kept lines included). */
    done: Partial<Record<Termination, number>>;
    failed: number;
    kept: number;
    /** What the runs that returned so far cost in USD; absent when none had a price. */
    costUsd?: number;
  }>;
  totals: { pairs: number; queued: number; running: number; done: number; failed: number; kept: number };
  /** Runs finished per minute since the start (kept pairs not counted). */
  runsPerMinute?: number;
  /** Estimated time left at that rate, ms from `asOf`. */
  etaMs?: number;
  continuedAsNew: number;
}

function sum(values: Partial<Record<Termination, number>>): number {
  return TERMINATIONS.reduce((total, termination) => total + (values[termination] ?? 0), 0);
}

export function batchProgress(facts: {
  batchId: string;
  name?: string;
  state: BatchState;
  output: string;
  questions: number;
  concurrency: number;
  counts: BatchCounts;
  startedAt: number;
  now: number;
  continuedAsNew: number;
}): BatchProgress {
  const perRollout = facts.counts.rollouts.map((entry, position) => ({
    rollout: position + 1,
    queued: Math.max(0, facts.questions - entry.started - entry.kept),
    running: entry.running,
    done: { ...entry.terminations },
    failed: entry.failed,
    kept: entry.kept,
    ...(entry.usage.costUsd !== undefined ? { costUsd: entry.usage.costUsd } : {}),
  }));
  const totals = perRollout.reduce(
    (total, entry) => ({
      pairs: total.pairs + facts.questions,
      queued: total.queued + entry.queued,
      running: total.running + entry.running,
      done: total.done + sum(entry.done),
      failed: total.failed + entry.failed,
      kept: total.kept + entry.kept,
    }),
    { pairs: 0, queued: 0, running: 0, done: 0, failed: 0, kept: 0 },
  );
  const finishedHere = totals.done + totals.failed - totals.kept;
  const elapsedMs = facts.now - facts.startedAt;
  const rate = runsPerMinute(finishedHere, elapsedMs);
  const eta = estimateRemainingMs(finishedHere, totals.queued + totals.running, elapsedMs);
  return {
    batchId: facts.batchId,
    ...(facts.name ? { name: facts.name } : {}),
    state: facts.state,
    output: facts.output,
    questions: facts.questions,
    rollouts: facts.counts.rollouts.length,
    concurrency: facts.concurrency,
    startedAt: new Date(facts.startedAt).toISOString(),
    asOf: facts.now,
    perRollout,
    totals,
    ...(rate === undefined ? {} : { runsPerMinute: rate }),
    ...(eta === undefined ? {} : { etaMs: eta }),
    continuedAsNew: facts.continuedAsNew,
  };
}

export function runsPerMinute(finished: number, elapsedMs: number): number | undefined {
  if (finished <= 0 || elapsedMs <= 0) return undefined;
  return Math.round((finished / (elapsedMs / 60_000)) * 10) / 10;
}

/** Time left at the completion rate so far; undefined until a run finished. */
export function estimateRemainingMs(finished: number, remaining: number, elapsedMs: number): number | undefined {
  if (remaining <= 0) return 0;
  if (finished <= 0 || elapsedMs <= 0) return undefined;
  return Math.round((remaining * elapsedMs) / finished);
}

/** Per-rollout part of the summary: lines by termination, failures, kept, not run, usage, durations. */
export function summaryPerRollout(counts: BatchCounts, questions: number): RolloutSummary[] {
  return counts.rollouts.map((entry, position) => {
    const returned = entry.started - entry.running - entry.failed;
    return {
      rollout: position + 1,
      terminations: { ...entry.terminations },
      failed: entry.failed,
      kept: entry.kept,
      notRun: Math.max(0, questions - entry.started - entry.kept),
      usage: { ...entry.usage },
      durationMs: {
        total: entry.durationMs,
        mean: returned > 0 ? Math.round(entry.durationMs / returned) : 0,
        max: entry.maxDurationMs,
      },
      ...costOf(entry.usage.costUsd, returned),
    };
  });
}

function costOf(totalUsd: number | undefined, runs: number): { cost?: CostFigures } {
  const cost = costFiguresOfTotal(totalUsd, runs);
  return cost ? { cost } : {};
}

/** The cost of the whole batch (every rollout's runs), from its rollouts' summaries; undefined when no run had a price. */
export function batchCost(perRollout: readonly RolloutSummary[]): CostFigures | undefined {
  const priced = perRollout.filter((rollout) => rollout.cost !== undefined);
  if (!priced.length) return undefined;
  const runs = perRollout.reduce((total, rollout) => total + (rollout.cost?.runs ?? 0), 0);
  return costFiguresOfTotal(
    priced.reduce((total, rollout) => total + (rollout.cost?.totalUsd ?? 0), 0),
    runs,
  );
}

/** Lines the iter files hold for these counts: every returned, failed and kept pair. */
export function linesOf(counts: BatchCounts): number {
  return counts.rollouts.reduce((total, entry) => total + sum(entry.terminations) + entry.failed, 0);
}
