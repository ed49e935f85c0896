import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { findFreePort } from '../../src/processes/dev-server';
import { progressQuery } from '../../src/core/message-definitions';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { parseMetricsText, sumOf, type ExposedSample } from './support/metrics-text';
import { PrometheusServer, prometheusMissing } from './support/prometheus-server';
import {
  agentMetricNames,
  ALERTS_FILE,
  dashboardExpressions,
  metricNamesIn,
  readDashboard,
  ruleExpressions,
  scrapedMetricNames,
} from './support/promql-metric-names';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { testNeeding } from './support/test-needing';
import type { WorkerProcess } from './support/worker-process';

/**
 * Issue 19's metrics, end to end: two workers with REACT_AGENT_METRICS_ADDRESS serve /metrics
 * while a run goes through model calls (one rate-limited), tool calls that succeed, answer an
 * error, fail and are retried or time out, and an answer; the counts match the run's result. The
 * first worker then stops and a second one replays the finished run (a query on a closed
 * workflow): it records no finished run, model call or tool call.
 *
 * The same is checked in what a real Prometheus (Debian's package; .ci/run installs it) stored
 * from scraping both workers every second, with the alert rules of ops/prometheus/alerts.yml
 * loaded and evaluated. Without /usr/bin/prometheus those tests fail saying what to install,
 * rather than vanish or pass; the /metrics checks run anyway.
 */
const scenarios = new Scenarios();
const prometheusUnavailable = prometheusMissing();
let environment: AgentEnvironment;
let prometheus: PrometheusServer | undefined;
const ports: number[] = [];
const instance = (index: number) => `127.0.0.1:${ports[index]}`;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  ports.push(await findFreePort(), await findFreePort());
  if (!prometheusUnavailable) {
    prometheus = await PrometheusServer.start({
      directory: join(environment.directory, 'prometheus'),
      targets: [instance(0), instance(1)],
      ruleFiles: [ALERTS_FILE],
    });
  }
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await environment?.close();
});

/** A test that needs Prometheus; without it, a test that fails with the reason. */
function withPrometheus(name: string, body: (server: PrometheusServer) => Promise<void>, timeoutMs = 60_000): void {
  testNeeding(prometheusUnavailable)(name, () => body(prometheus as PrometheusServer), timeoutMs);
}

async function metricsText(index: number): Promise<string> {
  return (await fetch(`http://${instance(index)}/metrics`)).text();
}

/** Polls a worker's /metrics until `accept` holds for its samples; returns them either way after `timeoutMs`. */
async function metricsWhen(
  index: number,
  accept: (samples: ExposedSample[]) => boolean,
  timeoutMs = 20_000,
): Promise<ExposedSample[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const samples = parseMetricsText(await metricsText(index));
    if (accept(samples) || Date.now() > deadline) return samples;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits until Prometheus has scraped `target` at least once after `since` (ms since the epoch). */
async function scrapedAfter(server: PrometheusServer, target: string, since: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [up] = await server.query(`timestamp(up{instance="${target}"})`);
    if (up && up.value * 1000 > since) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `Prometheus did not scrape ${target} after ${new Date(since).toISOString()}: ${JSON.stringify(await server.targets())}`,
  );
}

/** The first worker's prices (USD per million tokens): its calls have a cost, `react_agent_cost_usd_total`. */
const PRICES = { 'scripted-model': { input: 3, output: 15 } };

/** Equal as floating-point sums of the same costs may be, to a billionth of their size. */
function assertCost(actual: number | undefined, expected: number, what: string): void {
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= 1e-9 * Math.max(1, expected),
    `${what}: ${actual}, the run's cost ${expected}`,
  );
}

const EXPECTED_TOOL_CALLS = { 'lookup/ok': 1, 'lookup/error': 1, 'broken/failed': 2, 'hang/timed_out': 1 };

let result: ResearchRunResult;
let workflowId: string;
let first: WorkerProcess;
let workerMetrics = '';
let replayedAt = 0;

test("a worker's /metrics counts the run's model calls, tokens, tool calls and its end as its result has them", async () => {
  first = await environment.startWorker({
    REACT_AGENT_METRICS_ADDRESS: instance(0),
    REACT_AGENT_MODEL_PRICES: JSON.stringify(PRICES),
  });
  assert.match(first.log, new RegExp(`Prometheus metrics on http://${instance(0)}/metrics`));
  let rateLimited = false;
  workflowId = scenarios.add(runId('metrics'), (turn) => {
    if (turn === 1) return toolCall('lookup', { query: 'BYD 2024' });
    if (turn === 2 && !rateLimited) {
      rateLimited = true;
      return { status: 429, errorMessage: 'slow down', headers: { 'retry-after': '1' } };
    }
    if (turn === 2) return toolCall('broken', {});
    if (turn === 3) return toolCall('lookup', {});
    if (turn === 4) return toolCall('hang', {});
    return answer('BYD sold more.');
  });
  result = await (await environment.startRun({ question: 'Who sold more cars in 2024?' }, workflowId)).result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 5);
  assert.equal(result.toolCalls, 4);

  // The run's end is counted by the workflow task that completes it, and `hang` ignores its
  // cancellation: its attempt is counted when the activity stops waiting for it, after the run moved on.
  const samples = await metricsWhen(
    0,
    (now) =>
      sumOf(now, 'react_agent_runs_finished_total') === 1 &&
      sumOf(now, 'react_agent_tool_calls_total', { tool: 'hang' }) === 1,
  );
  workerMetrics = await metricsText(0);
  if (process.env.METRICS_DUMP) writeFileSync(process.env.METRICS_DUMP, workerMetrics);

  assert.equal(sumOf(samples, 'react_agent_runs_finished_total', { termination: 'answer' }), 1);
  assert.equal(
    sumOf(samples, 'react_agent_model_calls_total', { outcome: 'ok', model: 'scripted-model' }),
    result.iterations,
  );
  assert.equal(sumOf(samples, 'react_agent_model_calls_total', { outcome: 'rate_limited' }), 1);
  assert.equal(sumOf(samples, 'react_agent_model_calls_total'), result.iterations + 1);
  assert.equal(sumOf(samples, 'react_agent_tokens_total', { kind: 'prompt' }), result.usage.promptTokens);
  assert.equal(sumOf(samples, 'react_agent_tokens_total', { kind: 'completion' }), result.usage.completionTokens);
  assert.equal(sumOf(samples, 'react_agent_model_call_seconds_count'), result.iterations + 1);
  assert.equal(
    sumOf(samples, 'react_agent_model_first_token_seconds_count'),
    result.iterations,
    'the 429 sent no chunk',
  );
  // The cost in USD, a float gauge holding the process's running total: what the run's result says it cost.
  assert.ok((result.usage.costUsd ?? 0) > 0, `the run has a cost: ${JSON.stringify(result.usage)}`);
  assertCost(
    sumOf(samples, 'react_agent_cost_usd_total', { model: 'scripted-model' }),
    result.usage.costUsd ?? Number.NaN,
    'react_agent_cost_usd_total on /metrics',
  );
  assert.match(workerMetrics, /# TYPE react_agent_cost_usd_total gauge/);
  const toolCalls: Record<string, number> = {};
  for (const sample of samples.filter((each) => each.name === 'react_agent_tool_calls_total')) {
    const key = `${sample.labels.tool}/${sample.labels.outcome}`;
    toolCalls[key] = (toolCalls[key] ?? 0) + sample.value;
  }
  assert.deepEqual(toolCalls, EXPECTED_TOOL_CALLS);
  assert.equal(sumOf(samples, 'react_agent_tool_call_seconds_count'), 5);

  // The TypeScript SDK's metric meters add namespace, taskQueue and workflowType (activityType on the activities' metrics).
  const runs = samples.find((sample) => sample.name === 'react_agent_runs_finished_total');
  assert.equal(runs?.labels.workflowType, 'researchAgent');
  assert.equal(runs?.labels.taskQueue, environment.taskQueue);
  assert.equal(
    samples.find((sample) => sample.name === 'react_agent_model_calls_total')?.labels.activityType,
    'callModel',
  );
  // The SDK's own worker metrics are on the same page (Core's labels: task_queue, workflow_type, …).
  assert.ok(sumOf(samples, 'temporal_activity_schedule_to_start_latency_count') >= 10);
  assert.equal(
    sumOf(samples, 'temporal_workflow_completed', {
      workflow_type: 'researchAgent',
      task_queue: environment.taskQueue,
    }),
    1,
  );
}, 120_000);

withPrometheus("what Prometheus stored from scraping the worker matches the run's result", async (server) => {
  assert.ok(result, 'the first test ran');
  assert.equal(
    await server.waitForValue('sum(react_agent_tool_calls_total{tool="hang"})', (value) => value === 1),
    1,
    server.log(),
  );
  await scrapedAfter(server, instance(0), Date.now());
  const value = (expression: string) => server.value(expression);
  assert.equal(await value('sum(react_agent_runs_finished_total{termination="answer"})'), 1);
  assert.equal(
    await value('sum(react_agent_model_calls_total{outcome="ok", model="scripted-model"})'),
    result.iterations,
  );
  assert.equal(await value('sum(react_agent_model_calls_total{outcome="rate_limited"})'), 1);
  assert.equal(await value('sum(react_agent_tokens_total{kind="prompt"})'), result.usage.promptTokens);
  assert.equal(await value('sum(react_agent_tokens_total{kind="completion"})'), result.usage.completionTokens);
  assert.equal(await value('sum(react_agent_model_call_seconds_count)'), result.iterations + 1);
  assert.equal(await value('sum(react_agent_model_first_token_seconds_count)'), result.iterations);
  assert.ok((await value('sum(react_agent_model_call_seconds_sum)')) > 0);
  assertCost(
    await value('sum(react_agent_cost_usd_total{model="scripted-model"})'),
    result.usage.costUsd ?? Number.NaN,
    'react_agent_cost_usd_total in Prometheus',
  );
  const toolCalls = await server.query('sum by (tool, outcome) (react_agent_tool_calls_total)');
  assert.deepEqual(
    Object.fromEntries(toolCalls.map((sample) => [`${sample.labels.tool}/${sample.labels.outcome}`, sample.value])),
    EXPECTED_TOOL_CALLS,
  );
  assert.ok((await value('sum(temporal_activity_schedule_to_start_latency_count)')) >= 10);
  assert.equal(
    await value(`sum(temporal_workflow_completed{workflow_type="researchAgent", instance="${instance(0)}"})`),
    1,
  );
});

test('a replay of the finished run on a second worker records nothing', async () => {
  assert.ok(result, 'the first test ran');
  assert.equal(await first.stop(), 0);
  await environment.startWorker({ REACT_AGENT_METRICS_ADDRESS: instance(1) });
  // A query on a closed workflow replays its whole history on a worker: the second one, the only one left.
  const progress = await environment.client.workflow.getHandle(workflowId).query(progressQuery);
  assert.equal(progress.modelCalls, result.iterations);
  replayedAt = Date.now();
  const samples = await metricsWhen(
    1,
    (now) => sumOf(now, 'temporal_workflow_task_execution_latency_count', { workflow_type: 'researchAgent' }) > 0,
  );
  assert.ok(
    sumOf(samples, 'temporal_workflow_task_execution_latency_count', { workflow_type: 'researchAgent' }) > 0,
    'the second worker ran the replay',
  );
  assert.deepEqual(
    samples.filter((sample) => sample.name.startsWith('react_agent_')).map((sample) => sample.name),
    [],
    'a replay records no agent metric',
  );
}, 120_000);

withPrometheus(
  'in Prometheus, the run was counted once, by the first worker, and the replay added nothing',
  async (server) => {
    assert.ok(replayedAt, 'the replay test ran');
    await scrapedAfter(server, instance(1), replayedAt);
    assert.equal(
      (await server.query(`count_over_time(react_agent_runs_finished_total{instance="${instance(1)}"}[10m])`)).length,
      0,
    );
    assert.equal(await server.value('sum(max_over_time(react_agent_runs_finished_total[10m]))'), 1);
    assert.equal(
      await server.value('sum(max_over_time(react_agent_model_calls_total{outcome="ok"}[10m]))'),
      result.iterations,
    );
    assertCost(
      await server.value('sum(max_over_time(react_agent_cost_usd_total[10m]))'),
      result.usage.costUsd ?? Number.NaN,
      'the cost after the replay',
    );
  },
);

withPrometheus(
  'the alert rules of ops/prometheus/alerts.yml load into Prometheus and evaluate without errors on these metrics',
  async (server) => {
    const rules = await server.rules();
    assert.equal(rules.length, ruleExpressions(ALERTS_FILE).length, JSON.stringify(rules));
    for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError ?? ''} (${rule.query})`);
  },
);

test('every metric the alert rules and the Grafana dashboard query is one a worker serves or the agent defines', () => {
  assert.ok(workerMetrics, "the first test kept the worker's /metrics");
  const known = new Set([...scrapedMetricNames(workerMetrics), ...agentMetricNames()]);
  const queried = [...ruleExpressions(ALERTS_FILE), ...dashboardExpressions(readDashboard())].flatMap(metricNamesIn);
  assert.ok(queried.length > 20);
  assert.deepEqual(
    [...new Set(queried.filter((name) => !known.has(name)))],
    [],
    `served: ${[...known].sort().join(' ')}`,
  );
});

test('a worker whose metrics address is taken, or is no address, stops at start naming REACT_AGENT_METRICS_ADDRESS', async () => {
  const port = await findFreePort();
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
  try {
    for (const [address, message] of [
      [
        `127.0.0.1:${port}`,
        /REACT_AGENT_METRICS_ADDRESS=127\.0\.0\.1:\d+: the worker cannot serve Prometheus metrics there \(.*Address already in use/,
      ],
      [
        'metrics.example:9464',
        /REACT_AGENT_METRICS_ADDRESS must be an address to serve Prometheus metrics on.*the host must be an IP address/,
      ],
    ] as const) {
      const error = await environment.startWorker({ REACT_AGENT_METRICS_ADDRESS: address }).then(
        () => assert.fail('the worker started'),
        (failure: Error) => failure,
      );
      assert.match(error.message, message);
    }
  } finally {
    squatter.close();
  }
}, 120_000);
