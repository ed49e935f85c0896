import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { progressQuery } from '../../src/core/message-definitions';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { runClient, type ClientOutcome } from './support/client-process';

/*
 * Issue 19, "Usage and cost": the worker is given prices per model (REACT_AGENT_MODEL_PRICES);
 * each model call of a priced model returns its cost with its usage (cached prompt tokens at the
 * cached price), the run sums it into its result's `usage.costUsd`, its `progress` query and its
 * ReactCost search attribute. A model without a price has no cost: absent, not zero.
 */

const root = resolve(__dirname, '../..');
const scenarios = new Scenarios();
let environment: AgentEnvironment;

const PRICES = { 'priced-model': { input: 2, cachedInput: 0.5, output: 10 } };

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { REACT_AGENT_MODEL_PRICES: JSON.stringify(PRICES) },
  });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

/** `react-agent <arguments>`, as a user runs it, with the environment's Temporal address. */
function cli(...args: string[]): Promise<ClientOutcome> {
  return cliWith({}, ...args);
}

function cliWith(extra: Record<string, string>, ...args: string[]): Promise<ClientOutcome> {
  return runClient(process.execPath, [join(root, 'bin/react-agent.js'), ...args], {
    cwd: root,
    env: { ...process.env, ...environment.environment, ...extra },
    timeoutMs: 120_000,
  });
}

/** `react-agent status <id>`. */
function status(workflowId: string): Promise<ClientOutcome> {
  return cli('status', workflowId);
}

const attributesOf = async (handle: Awaited<ReturnType<AgentEnvironment['startRun']>>) =>
  Object.fromEntries(
    (await handle.describe()).typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
  );

test('a run of a priced model ends with the cost of its calls in its result, its progress and ReactCost', async () => {
  const replies: ScriptedReply[] = [
    { ...toolCall('lookup', { query: 'BYD 2024 sales' }), promptTokens: 1_000, completionTokens: 100 },
    {
      ...toolCall('lookup', { query: 'Tesla 2024 deliveries' }),
      promptTokens: 2_000,
      completionTokens: 120,
      cachedPromptTokens: 1_000,
    },
    { ...answer('BYD sold more.'), promptTokens: 3_000, completionTokens: 50, cachedPromptTokens: 2_000 },
  ];
  // Per million tokens: uncached prompt at 2, cached at 0.5, completion at 10.
  const expected =
    (1_000 * 2 + 100 * 10 + (1_000 * 2 + 1_000 * 0.5 + 120 * 10) + (1_000 * 2 + 2_000 * 0.5 + 50 * 10)) / 1e6;
  const workflowId = scenarios.add(runId('cost'), replies);
  const handle = await environment.startRun(
    { question: 'Who sold more cars in 2024?', model: { model: 'priced-model' } },
    workflowId,
  );
  const result = (await handle.result()) as ResearchRunResult;

  assert.equal(result.termination, 'answer');
  assert.deepEqual(
    { ...result.usage, costUsd: undefined, cacheSavedUsd: undefined },
    {
      promptTokens: 6_000,
      completionTokens: 270,
      totalTokens: 6_270,
      costUsd: undefined,
      cachedPromptTokens: 3_000,
      cacheSavedUsd: undefined,
    },
  );
  // What the cache saved: the 3,000 cached prompt tokens at 0.5 instead of 2.
  const saved = (3_000 * (2 - 0.5)) / 1e6;
  assert.ok(
    Math.abs((result.usage.cacheSavedUsd ?? Number.NaN) - saved) < 1e-12,
    `saved ${result.usage.cacheSavedUsd}`,
  );
  assert.ok(
    Math.abs((result.usage.costUsd ?? Number.NaN) - expected) < 1e-12,
    `cost ${result.usage.costUsd}, expected ${expected}`,
  );

  const progress = await handle.query(progressQuery);
  assert.equal(progress.totalTokens, 6_270);
  assert.ok(Math.abs((progress.costUsd ?? Number.NaN) - expected) < 1e-12, `progress cost ${progress.costUsd}`);

  const shown = await status(workflowId);
  assert.equal(shown.code, 0, shown.stderr);
  const printed = JSON.parse(shown.stdout) as { progress: { totalTokens: number; costUsd?: number } };
  assert.equal(printed.progress.totalTokens, 6_270, '`react-agent status` shows the tokens');
  assert.ok(
    Math.abs((printed.progress.costUsd ?? Number.NaN) - expected) < 1e-12,
    `\`react-agent status\` shows the cost: ${shown.stdout}`,
  );

  const attributes = await attributesOf(handle);
  assert.equal(attributes.ReactTokens, 6_270);
  assert.ok(
    typeof attributes.ReactCost === 'number' && Math.abs(attributes.ReactCost - expected) < 1e-12,
    `ReactCost ${String(attributes.ReactCost)}`,
  );
});

test('a run of a model without a price has no cost: none in its result, its progress or its search attributes', async () => {
  const workflowId = scenarios.add(runId('no-cost'), [
    { ...answer('Canberra.'), promptTokens: 500, completionTokens: 20 },
  ]);
  const handle = await environment.startRun({ question: 'What is the capital of Australia?' }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.deepEqual(result.usage, { promptTokens: 500, completionTokens: 20, totalTokens: 520 });
  assert.equal('costUsd' in (await handle.query(progressQuery)), false);
  const attributes = await attributesOf(handle);
  assert.equal(attributes.ReactTokens, 520);
  assert.equal('ReactCost' in attributes, false);
});

const asksForFinalAnswer = (request: ScriptedRequest) =>
  /Stop calling tools now/.test(String(request.messages.at(-1)?.content ?? ''));

test('--max-cost: the run ends cost_limit through its final answer, past its budget by less than one call', async () => {
  // Every call: 10,000 prompt tokens at 2 USD and 1,000 completion tokens at 10 USD per million = 0.03 USD.
  const callCost = (10_000 * 2 + 1_000 * 10) / 1e6;
  const budget = 0.1;
  const finalAnswerRequests: string[] = [];
  const workflowId = scenarios.add(runId('max-cost'), (turn, request) => {
    if (asksForFinalAnswer(request)) {
      finalAnswerRequests.push(String(request.messages.at(-1)?.content ?? ''));
      return { ...answer('BYD, from what I found.'), promptTokens: 10_000, completionTokens: 1_000 };
    }
    return { ...toolCall('lookup', { query: `step ${turn}` }), promptTokens: 10_000, completionTokens: 1_000 };
  });
  const started = await cli(
    'start',
    'Who sold more cars in 2024?',
    '--model',
    'priced-model',
    '--max-cost',
    String(budget),
    '--id',
    workflowId,
  );
  assert.equal(started.code, 0, started.stderr);
  const handle = environment.client.workflow.getHandle(workflowId);
  const result = (await handle.result()) as ResearchRunResult;

  assert.equal(result.termination, 'cost_limit', `${result.termination}: ${result.error ?? result.prediction}`);
  assert.equal(result.details.finalAnswerPhase, 'cost_limit');
  assert.equal(result.prediction, 'BYD, from what I found.', 'the final answer call’s answer');
  assert.equal(finalAnswerRequests.length, 1);
  assert.match(finalAnswerRequests[0] ?? '', /money this research may spend is used up/);
  const cost = result.usage.costUsd ?? Number.NaN;
  // 3 research calls (0.09 spent, and a 4th like the last would reach 0.1), then the final answer call.
  assert.equal(result.iterations, 4);
  assert.ok(Math.abs(cost - 4 * callCost) < 1e-12, `cost ${cost}`);
  assert.ok(cost >= budget, `the budget was reached: ${cost} ≥ ${budget}`);
  assert.ok(
    cost - budget <= callCost + 1e-12,
    `past the budget by at most one call: ${cost} - ${budget} ≤ ${callCost}`,
  );

  const progress = await handle.query(progressQuery);
  assert.equal(progress.termination, 'cost_limit');
  assert.equal(progress.limits.maxCostUsd, budget);
  assert.equal(progress.remaining.costUsd, 0, 'nothing left of the budget');
  const shown = await status(workflowId);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(
    (JSON.parse(shown.stdout) as { termination?: string }).termination,
    'cost_limit',
    'ReactTermination, shown by status',
  );

  const followed = await cli('follow', workflowId);
  assert.equal(followed.code, 0, followed.stderr);
  const printed = `${followed.stderr}\n${followed.stdout}`;
  // Each call's cost, what the run spent so far and its budget.
  assert.match(
    printed,
    /\[call 1\] .*\(\+1,000, \$0\.03000; \$0\.03000 of \$0\.1000 spent\)/,
    `each call's cost: ${printed}`,
  );
  assert.match(printed, /\[call 3\] .*\(\+1,000, \$0\.03000; \$0\.09000 of \$0\.1000 spent\)/);
  assert.match(
    printed,
    /\[call 4\] asking for the final answer\n\[call 4\] .*\(\+1,000, \$0\.03000; \$0\.1200 of \$0\.1000 spent\)/,
  );
  assert.match(followed.stdout, /Ended: cost_limit after 4 model calls, .* tokens, \$0\.1200\./);
});

test('--max-cost for a model without a price: the run ends error after its first call, saying why', async () => {
  const workflowId = scenarios.add(runId('max-cost-no-price'), (turn) => ({
    ...toolCall('lookup', { query: `step ${turn}` }),
    promptTokens: 1_000,
    completionTokens: 100,
  }));
  const handle = await environment.startRun(
    { question: 'Who sold more cars in 2024?', limits: { maxCostUsd: 0.5 } },
    workflowId,
  );
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'error');
  assert.equal(result.iterations, 1, 'one call, no final answer call');
  assert.equal(result.toolCalls, 1, 'its tool call answered as not run');
  assert.match(
    result.error ?? '',
    /cost budget \(limits\.maxCostUsd 0\.5 USD\).*no price for the model.*REACT_AGENT_MODEL_PRICES/,
  );
  assert.equal('costUsd' in result.usage, false);
});

test('--max-cost that is not a number above 0 is refused before anything starts', async () => {
  for (const bad of ['-1', 'abc', '0']) {
    const refused = await cli('start', 'Who sold more cars in 2024?', `--max-cost=${bad}`);
    assert.equal(refused.code, 2, `${bad}: ${refused.stdout}${refused.stderr}`);
    assert.match(refused.stderr, /--max-cost must be a number of US dollars above 0/);
  }
});

test('react-agent run that would start its own worker refuses --max-cost for a model its prices lack, before any call', async () => {
  // A task queue no worker polls: `run` would start one with its own environment, whose prices cover only priced-model.
  const before = environment.model.requests.length;
  const refused = await cliWith(
    { REACT_AGENT_TASK_QUEUE: `no-worker-${Date.now().toString(36)}` },
    'run',
    'Who sold more cars in 2024?',
    '--max-cost',
    '0.5',
  );
  assert.equal(refused.code, 2, `${refused.stdout}${refused.stderr}`);
  assert.match(refused.stderr, /--max-cost needs a price for the model "scripted-model".*\(it prices priced-model\)/);
  assert.doesNotMatch(refused.stderr, /Run .* started/);
  assert.equal(environment.model.requests.length, before, 'no model call');
});
