import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { findFreePort } from '../../src/cli/dev-server';
import { progressQuery } from '../../src/core/message-definitions';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { PrometheusServer, prometheusMissing } from './support/prometheus-server';
import { agentMetricNames, dashboardExpressions, metricNamesIn, readDashboard, scrapedMetricNames } from './support/promql-metric-names';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import type { WorkerProcess } from './support/worker-process';

/**
 * Issue 19's metrics, end to end: a real Prometheus (Debian's package) scrapes two workers with
 * REACT_AGENT_METRICS_ADDRESS set while a run goes through model calls (one rate-limited), tool
 * calls that succeed, fail, are retried or time out, and an answer; what Prometheus stored matches
 * the run's result. The first worker then stops and a second one replays the finished run (a query
 * on a closed workflow): it counts no finished run, no model call and no tool call.
 */
const root = resolve(__dirname, '../..');
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let prometheus: PrometheusServer;
const ports: number[] = [];
const instance = (index: number) => `127.0.0.1:${ports[index]}`;

beforeAll(async () => {
  const missing = prometheusMissing();
  if (missing) throw new Error(missing);
  environment = await AgentEnvironment.start({ script: scenarios.script });
  ports.push(await findFreePort(), await findFreePort());
  prometheus = await PrometheusServer.start({
    directory: join(environment.directory, 'prometheus'),
    targets: [instance(0), instance(1)],
    ruleFiles: [join(root, 'ops/prometheus/alerts.yml')],
  });
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await environment?.close();
});

async function metricsText(index: number): Promise<string> {
  return (await fetch(`http://${instance(index)}/metrics`)).text();
}

/** Waits until Prometheus has scraped `instance` at least once after `since` (ms since the epoch). */
async function scrapedAfter(target: string, since: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [up] = await prometheus.query(`timestamp(up{instance="${target}"})`);
    if (up && up.value * 1000 > since) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Prometheus did not scrape ${target} after ${new Date(since).toISOString()}: ${JSON.stringify(await prometheus.targets())}`);
}

let result: ResearchRunResult;
let workflowId: string;
let first: WorkerProcess;
let workerMetrics = '';

test("Prometheus's stored values of a run's model calls, tokens and tool calls match its result", async () => {
  first = await environment.startWorker({ REACT_AGENT_METRICS_ADDRESS: instance(0) });
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

  // The run ends before the workflow task that counts it has reached a scrape: wait for it.
  assert.equal(await prometheus.waitForValue('sum(react_agent_runs_finished_total)', (value) => value >= 1), 1, prometheus.log());
  await scrapedAfter(instance(0), Date.now());
  if (process.env.METRICS_DUMP) writeFileSync(process.env.METRICS_DUMP, await metricsText(0));

  const value = (expression: string) => prometheus.value(expression);
  assert.equal(await value('sum(react_agent_runs_finished_total{termination="answer"})'), 1);
  assert.equal(await value('sum(react_agent_model_calls_total{outcome="ok", model="scripted-model"})'), result.iterations);
  assert.equal(await value('sum(react_agent_model_calls_total{outcome="rate_limited"})'), 1);
  assert.equal(await value('sum(react_agent_model_calls_total)'), result.iterations + 1);
  assert.equal(await value('sum(react_agent_tokens_total{kind="prompt"})'), result.usage.promptTokens);
  assert.equal(await value('sum(react_agent_tokens_total{kind="completion"})'), result.usage.completionTokens);
  assert.equal(await value('sum(react_agent_model_call_seconds_count)'), result.iterations + 1);
  assert.equal(await value('sum(react_agent_model_first_token_seconds_count)'), result.iterations, 'the 429 sent no chunk');
  assert.ok((await value('sum(react_agent_model_call_seconds_sum)')) > 0);

  // `hang` ignores its cancellation: its attempt is counted when the activity gives up waiting for it, after the run moved on.
  await prometheus.waitForValue('sum(react_agent_tool_calls_total{tool="hang"})', (count) => count === 1);
  const toolCalls = await prometheus.query('sum by (tool, outcome) (react_agent_tool_calls_total)');
  const byToolAndOutcome = Object.fromEntries(toolCalls.map((sample) => [`${sample.labels.tool}/${sample.labels.outcome}`, sample.value]));
  assert.deepEqual(byToolAndOutcome, { 'lookup/ok': 1, 'lookup/error': 1, 'broken/failed': 2, 'hang/timed_out': 1 });
  assert.equal(await value('sum(react_agent_tool_call_seconds_count)'), 5);
  workerMetrics = await metricsText(0);

  // The SDK's own worker metrics are on the same endpoint.
  assert.ok((await value('sum(temporal_activity_schedule_to_start_latency_count)')) >= 8);
  assert.ok((await value('sum(temporal_workflow_completed{workflow_type="researchAgent"})')) >= 1);
  const [runs] = await prometheus.query('react_agent_runs_finished_total');
  // The TypeScript SDK's metric meters add namespace, taskQueue and workflowType (activityType on the activities' metrics).
  assert.equal(runs?.labels.workflowType, 'researchAgent');
  assert.equal(runs?.labels.taskQueue, environment.taskQueue);
}, 120_000);

test('a replay of the finished run on a second worker adds nothing', async () => {
  assert.ok(result, 'the first test ran');
  assert.equal(await first.stop(), 0);
  const second = await environment.startWorker({ REACT_AGENT_METRICS_ADDRESS: instance(1) });
  // A query on a closed workflow replays its whole history on a worker: the second one, the only one left.
  const progress = await environment.client.workflow.getHandle(workflowId).query(progressQuery);
  assert.equal(progress.modelCalls, result.iterations);
  const replayedAt = Date.now();
  await scrapedAfter(instance(1), replayedAt);

  const secondText = await metricsText(1);
  assert.match(secondText, /temporal_workflow_task_execution_latency_count\{[^}]*workflow_type="researchAgent"[^}]*\} [1-9]/, 'the second worker ran the replay');
  assert.doesNotMatch(secondText, /^react_agent_/m, 'a replay records no agent metric');
  assert.equal((await prometheus.query(`count_over_time(react_agent_runs_finished_total{instance="${instance(1)}"}[10m])`)).length, 0);
  assert.equal(await prometheus.value('sum(max_over_time(react_agent_runs_finished_total[10m]))'), 1, 'the run was counted once, by the first worker');
  assert.equal(await prometheus.value('sum(max_over_time(react_agent_model_calls_total{outcome="ok"}[10m]))'), result.iterations);
  await second.stop();
}, 120_000);

test('the alert rules in ops/prometheus/alerts.yml load and evaluate without errors on these metrics', async () => {
  const rules = await prometheus.rules();
  assert.ok(rules.length >= 8, JSON.stringify(rules));
  for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError ?? ''} (${rule.query})`);
}, 60_000);

test('every metric the alert rules and the Grafana dashboard query is one a worker serves or the agent defines', async () => {
  assert.ok(workerMetrics, 'the first test kept the worker\'s /metrics');
  const known = new Set([...scrapedMetricNames(workerMetrics), ...agentMetricNames()]);
  const alertQueries = (await prometheus.rules()).map((rule) => rule.query);
  const queried = [...alertQueries, ...dashboardExpressions(readDashboard())].flatMap(metricNamesIn);
  assert.ok(queried.length > 20);
  assert.deepEqual([...new Set(queried.filter((name) => !known.has(name)))], [], `served: ${[...known].sort().join(' ')}`);
});

test('a worker whose metrics address is taken, or is no address, stops at start naming REACT_AGENT_METRICS_ADDRESS', async () => {
  const port = await findFreePort();
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
  try {
    for (const [address, message] of [
      [`127.0.0.1:${port}`, /REACT_AGENT_METRICS_ADDRESS=127\.0\.0\.1:\d+: the worker cannot serve Prometheus metrics there \(.*Address already in use/],
      ['metrics.example:9464', /REACT_AGENT_METRICS_ADDRESS must be an address to serve Prometheus metrics on.*the host must be an IP address/],
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
