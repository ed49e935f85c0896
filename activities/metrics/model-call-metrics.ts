import type { Context } from '@temporalio/activity';
import { ApplicationFailure, type MetricMeter } from '@temporalio/common';
import { AgentMetrics, MODEL_CALL_OUTCOMES, type ModelCallOutcome, type TokenKind } from '../../src/core/agent-metrics';
import { cancelledAttemptOutcome } from './attempt-outcome';

const MODEL_FAILURE_PREFIX = 'ReactAgent.Model.';

/** `RateLimited` → `rate_limited`. */
function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The `outcome` label of a model call that failed with `error` (see {@link MODEL_CALL_OUTCOMES}). */
export function modelCallOutcome(error: unknown, context: Context): ModelCallOutcome {
  const cancelled = cancelledAttemptOutcome(context);
  if (cancelled) return cancelled;
  const type = error instanceof ApplicationFailure ? error.type : (error as { type?: unknown } | undefined)?.type;
  if (typeof type === 'string' && type.startsWith(MODEL_FAILURE_PREFIX)) {
    const outcome = snakeCase(type.slice(MODEL_FAILURE_PREFIX.length));
    if ((MODEL_CALL_OUTCOMES as readonly string[]).includes(outcome)) return outcome as ModelCallOutcome;
  }
  return 'error';
}

/**
 * What the successful model calls of this process cost, per series of `react_agent_cost_usd_total`
 * (namespace, task queue, model): the running totals the gauge is set to. They only grow, and a
 * new process starts them at 0, so the gauge behaves as a counter of dollars would.
 */
export class CostTotals {
  private readonly totals = new Map<string, number>();

  /** Adds `usd` to the series' total and returns the new total. */
  add(series: readonly string[], usd: number): number {
    const key = JSON.stringify(series);
    const total = (this.totals.get(key) ?? 0) + usd;
    this.totals.set(key, total);
    return total;
  }
}

/** The totals of this worker process. */
export const processCostTotals = new CostTotals();

/** What prompt caching saved this worker process, per series of `react_agent_cache_saved_usd_total`. */
export const processCacheSavedTotals = new CostTotals();

/**
 * Measures one model call (one `callModel` attempt) and records it through the activity's metric
 * meter: `requestSent` when the request leaves, `chunkArrived` for each streamed chunk (the first
 * gives the first-token time), then `succeeded` with the tokens or `failed` with the error, once.
 * Nothing is recorded for an attempt that failed before its request was sent (a store failure).
 */
export class ModelCallMetrics {
  private sentAt: number | undefined;
  private firstChunkSeen = false;
  private recorded = false;

  constructor(
    private readonly context: Context,
    private readonly model: string,
    private readonly now: () => number = () => performance.now(),
    private readonly costTotals: CostTotals = processCostTotals,
    private readonly cacheSavedTotals: CostTotals = processCacheSavedTotals,
  ) {}

  private get meter(): MetricMeter {
    return this.context.metricMeter;
  }

  requestSent(): void {
    this.sentAt = this.now();
  }

  chunkArrived(): void {
    if (this.firstChunkSeen || this.sentAt === undefined) return;
    this.firstChunkSeen = true;
    const { name, unit, description } = AgentMetrics.modelFirstTokenSeconds;
    this.meter
      .createHistogram(name, 'float', unit, description)
      .record((this.now() - this.sentAt) / 1000, { model: this.model });
  }

  /**
   * The stream ended with a finish reason: an `ok` call and its tokens (kinds the server did not
   * report are left out), and its cost in USD when its model has a price (added to the process's
   * total for the series, which the float gauge `react_agent_cost_usd_total` is set to), and what
   * prompt caching saved it when it has that (`react_agent_cache_saved_usd_total`, the same way).
   */
  succeeded(tokens: Partial<Record<TokenKind, number | undefined>>, costUsd?: number, cacheSavedUsd?: number): void {
    if (!this.end('ok')) return;
    const { name, unit, description } = AgentMetrics.tokens;
    const counter = this.meter.createCounter(name, unit, description);
    for (const [kind, count] of Object.entries(tokens)) {
      if (count !== undefined && Number.isFinite(count) && count > 0)
        counter.add(Math.round(count), { model: this.model, kind });
    }
    if (costUsd !== undefined && Number.isFinite(costUsd) && costUsd >= 0) {
      const { info } = this.context;
      const total = this.costTotals.add([info.activityNamespace, info.taskQueue, this.model], costUsd);
      const cost = AgentMetrics.cost;
      this.meter.createGauge(cost.name, 'float', cost.unit, cost.description).set(total, { model: this.model });
    }
    if (cacheSavedUsd !== undefined && Number.isFinite(cacheSavedUsd)) {
      const { info } = this.context;
      const total = this.cacheSavedTotals.add([info.activityNamespace, info.taskQueue, this.model], cacheSavedUsd);
      const saved = AgentMetrics.cacheSaved;
      this.meter.createGauge(saved.name, 'float', saved.unit, saved.description).set(total, { model: this.model });
    }
  }

  /** The attempt failed with `error` after the request was sent. */
  failed(error: unknown): void {
    this.end(modelCallOutcome(error, this.context));
  }

  private end(outcome: ModelCallOutcome): boolean {
    if (this.recorded || this.sentAt === undefined) return false;
    this.recorded = true;
    const labels = { model: this.model, outcome };
    const calls = AgentMetrics.modelCalls;
    this.meter.createCounter(calls.name, calls.unit, calls.description).add(1, labels);
    const seconds = AgentMetrics.modelCallSeconds;
    this.meter
      .createHistogram(seconds.name, 'float', seconds.unit, seconds.description)
      .record((this.now() - this.sentAt) / 1000, labels);
    return true;
  }
}
