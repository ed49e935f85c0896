/**
 * The agent's own Prometheus metrics: every name, unit, description, label set and histogram
 * bucket list in one place. Activities record model and tool calls through their metric meter
 * (`Context.current().metricMeter`), the workflow records a finished run through the workflow
 * metric meter (which emits nothing while replaying). The SDK adds its own labels to each:
 * `namespace`, `task_queue` and `activity_type` or `workflow_type`.
 *
 * Workflow-safe: constants only.
 */
import type { Termination } from './termination';

/** One agent metric as the Temporal SDK's metric meter creates it. */
export interface AgentMetricDefinition {
  /**
   * `counter` (whole numbers), `histogram`, or `gauge` (a float gauge): the SDK's counters add
   * integers only, so a total in fractions is kept by the process and set on a float gauge.
   */
  readonly kind: 'counter' | 'histogram' | 'gauge';
  /** The Prometheus name, exactly as scraped (counters end in `_total`; the SDK adds no prefix or suffix to it). */
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  /** The labels the agent sets (the SDK's own come on top). */
  readonly labels: readonly string[];
  /** Histograms: the bucket upper bounds, in the metric's unit. */
  readonly buckets?: readonly number[];
}

/**
 * The kinds of token `react_agent_tokens_total` counts; `reasoning`, `cached` (prompt tokens read
 * from the server's cache) and `cache_write` (written to it: Anthropic) only where the server's usage
 * reports them. The cache hit rate is `cached / prompt`.
 */
export const TOKEN_KINDS = ['prompt', 'completion', 'reasoning', 'cached', 'cache_write'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/**
 * `outcome` of a model call (one activity attempt): `ok`, `cancelled`, or the failure it ended
 * with, named after its `ReactAgent.Model.*` failure type (`rate_limited`, `server_error`,
 * `unreachable`, `bad_response`, `first_token_timeout`, `request_rejected`,
 * `context_length_exceeded`, `reply_too_large`), `timed_out` when Temporal timed the attempt out, `error` otherwise.
 */
export const MODEL_CALL_OUTCOMES = [
  'ok',
  'cancelled',
  'timed_out',
  'rate_limited',
  'server_error',
  'unreachable',
  'bad_response',
  'first_token_timeout',
  'request_rejected',
  'context_length_exceeded',
  'reply_too_large',
  'error',
] as const;
export type ModelCallOutcome = (typeof MODEL_CALL_OUTCOMES)[number];

/**
 * `outcome` of a tool call (one activity attempt): `ok`; `error` when the tool answered with an
 * error the model sees (bad arguments, a failure the tool reports); `failed` when the attempt
 * threw (Temporal retries it; after the last attempt the run gets an error observation);
 * `cancelled`; `timed_out` when Temporal timed the attempt out.
 */
export const TOOL_CALL_OUTCOMES = ['ok', 'error', 'failed', 'cancelled', 'timed_out'] as const;
export type ToolCallOutcome = (typeof TOOL_CALL_OUTCOMES)[number];

/** Model calls last seconds to minutes; a reply's first token can take minutes on a slow server reading a long prompt. */
const MODEL_SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600] as const;
const FIRST_TOKEN_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] as const;
const LIMIT_WAIT_SECONDS = [0.05, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300] as const;
const TOOL_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

export const AgentMetrics = {
  modelCalls: {
    kind: 'counter',
    name: 'react_agent_model_calls_total',
    unit: 'calls',
    description: 'Model calls (callModel activity attempts) by model and outcome.',
    labels: ['model', 'outcome'],
  },
  modelCallSeconds: {
    kind: 'histogram',
    name: 'react_agent_model_call_seconds',
    unit: 's',
    description: 'Duration of a model call, from sending the request until the stream ended or failed.',
    labels: ['model', 'outcome'],
    buckets: MODEL_SECONDS,
  },
  modelFirstTokenSeconds: {
    kind: 'histogram',
    name: 'react_agent_model_first_token_seconds',
    unit: 's',
    description: "Time from sending a model request until the reply's first streamed chunk.",
    labels: ['model'],
    buckets: FIRST_TOKEN_SECONDS,
  },
  tokens: {
    kind: 'counter',
    name: 'react_agent_tokens_total',
    unit: 'tokens',
    description:
      'Tokens of successful model calls by kind (prompt, completion; reasoning and cached where the server reports them).',
    labels: ['model', 'kind'],
  },
  cost: {
    kind: 'gauge',
    // The SDK's counters add integers (Core adds `value as u64`), so a fraction of a dollar would
    // add nothing. The model activity keeps the running total of this process per series
    // (activities/metrics/model-call-metrics.ts `CostTotals`) and sets it on a float gauge: it only
    // grows and starts again at 0 with the process, as a counter does, so rate() and increase() read it as one.
    name: 'react_agent_cost_usd_total',
    unit: 'USD',
    description:
      'Cost in US dollars of the successful model calls this worker process made, at the prices REACT_AGENT_MODEL_PRICES gives (models without a price are not counted): a running total since the process started, like a counter.',
    labels: ['model'],
  },
  cacheSaved: {
    kind: 'gauge',
    // A float gauge set to the process's running total, as `cost` is; it may go down (a call whose cache writes cost more than its reads saved).
    name: 'react_agent_cache_saved_usd_total',
    unit: 'USD',
    description:
      'What prompt caching saved in US dollars on the successful model calls this worker process made (their cost with every prompt token at the input price and no cache write, less their cost charged; negative where cache writes cost more), for priced calls that reported cache tokens: a running total since the process started.',
    labels: ['model'],
  },
  modelLimitWaitSeconds: {
    kind: 'histogram',
    name: 'react_agent_model_limit_wait_seconds',
    unit: 's',
    description:
      "Time a model call was asked to wait for its model's shared limit (REACT_AGENT_MODEL_LIMITS) before its request, by model and the limit it waited for (none when it did not wait).",
    labels: ['model', 'limit'],
    buckets: LIMIT_WAIT_SECONDS,
  },
  modelLimitPauses: {
    kind: 'counter',
    name: 'react_agent_model_limit_pauses_total',
    unit: 'pauses',
    description:
      "429s with retry-after from a limited model's provider that this worker reported to the model's limiter (each pauses every worker's calls of the model once).",
    labels: ['model'],
  },
  toolCalls: {
    kind: 'counter',
    name: 'react_agent_tool_calls_total',
    unit: 'calls',
    description: 'Tool calls (tool activity attempts) by tool and outcome.',
    labels: ['tool', 'outcome'],
  },
  toolCallSeconds: {
    kind: 'histogram',
    name: 'react_agent_tool_call_seconds',
    unit: 's',
    description: 'Duration of a tool call attempt.',
    labels: ['tool'],
    buckets: TOOL_SECONDS,
  },
  runsFinished: {
    kind: 'counter',
    name: 'react_agent_runs_finished_total',
    unit: 'runs',
    description:
      'Research runs finished, by termination and role (run, or sub_run of a tree); counted once per run, never on replay.',
    labels: ['termination', 'role'],
  },
} as const satisfies Record<string, AgentMetricDefinition>;

/** The labels `react_agent_runs_finished_total` carries. */
export interface RunsFinishedLabels {
  termination: Termination;
  /**
   * `run` for a run a client started (a tree's lead included), `sub_run` for one a run delegated to
   * (issue 30), so counts of runs can leave sub-runs out (`role!="sub_run"`, which also matches
   * series from workers before the label).
   */
  role: 'run' | 'sub_run';
}

/** The histogram buckets for the SDK's Prometheus exporter (`histogramBucketOverrides`). */
export function agentHistogramBuckets(): Record<string, number[]> {
  const buckets: Record<string, number[]> = {};
  for (const metric of Object.values(AgentMetrics) as AgentMetricDefinition[]) {
    if (metric.buckets) buckets[metric.name] = [...metric.buckets];
  }
  return buckets;
}
