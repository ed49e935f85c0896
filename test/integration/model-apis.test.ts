import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { describeResult } from '../../src/cli/follow-run';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { historyText } from './support/mcp-servers';
import { runId, Scenarios } from './support/scenarios';

/**
 * A research run through each model API (issue 31): REACT_AGENT_MODEL_API=anthropic-messages
 * against the scripted server's `POST /v1/messages`, openai-responses against its
 * `POST /v1/responses`. A native tool call with reasoning, then the answer: the second request
 * carries the thinking block with its signature (Anthropic, with its cache breakpoints) or the
 * reasoning item with its encrypted content (Responses); the run's usage and cost count the cache
 * reads and writes; neither the signature nor the encrypted reasoning is in the run's history.
 */

const PRICES = JSON.stringify({ 'scripted-model': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } });
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw';

const replies: ScriptedReply[] = [
  {
    content: '',
    reasoning: 'I should look up the 2024 sales.',
    reasoningSignature: SIGNATURE,
    toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"query":"BYD 2024"}' }],
    promptTokens: 1_200,
    cacheWriteTokens: 1_000,
    completionTokens: 30,
  },
  {
    content: 'BYD sold more cars than Tesla in 2024.',
    reasoning: 'The lookup answers it.',
    promptTokens: 1_400,
    cachedPromptTokens: 1_000,
    cacheWriteTokens: 300,
    completionTokens: 12,
  },
];

async function researchRun(environment: AgentEnvironment, scenarios: Scenarios, label: string) {
  const workflowId = scenarios.add(runId(label), replies);
  const handle = await environment.startRun(
    { question: 'Who sold more cars in 2024, BYD or Tesla?', protocol: 'native' },
    workflowId,
  );
  const result = (await handle.result()) as ResearchRunResult;
  return {
    result,
    requests: environment.requestsOf(workflowId),
    history: historyText(await handle.fetchHistory()),
    messages: await environment.transcript(result),
  };
}

function startEnvironment(scenarios: Scenarios, api: string, endpoint: (origin: string) => Record<string, string>) {
  let environment: AgentEnvironment | undefined;
  beforeAll(async () => {
    environment = await AgentEnvironment.start({ script: scenarios.script });
    await environment.startWorker({
      REACT_AGENT_MODEL_API: api,
      REACT_AGENT_MODEL_PRICES: PRICES,
      ...endpoint(environment.model.origin),
    });
  }, 120_000);
  afterAll(async () => {
    await environment?.close();
  });
  return () => environment as AgentEnvironment;
}

describe('REACT_AGENT_MODEL_API=anthropic-messages', () => {
  const scenarios = new Scenarios();
  const environment = startEnvironment(scenarios, 'anthropic-messages', (origin) => ({
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: 'sk-ant-test-0123456789',
  }));

  test('a tool call with thinking, then the answer: the thinking block goes back signed, cache breakpoints, cache reads and writes priced', async () => {
    const { result, requests, history, messages } = await researchRun(environment(), scenarios, 'anthropic');
    assert.equal(result.termination, 'answer', result.error);
    assert.equal(result.prediction, 'BYD sold more cars than Tesla in 2024.');
    assert.deepEqual(
      requests.map((request: ScriptedRequest) => request.api),
      ['anthropic-messages', 'anthropic-messages'],
    );

    const second = requests[1]!.body as {
      system: Array<{ cache_control?: unknown }>;
      tools: Array<{ name: string; cache_control?: unknown }>;
      messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
    };
    const assistant = second.messages.find((message) => message.role === 'assistant');
    assert.deepEqual(assistant?.content.slice(0, 1), [
      { type: 'thinking', thinking: 'I should look up the 2024 sales.', signature: SIGNATURE },
    ]);
    assert.deepEqual(assistant?.content[1], {
      type: 'tool_use',
      id: 'call_1',
      name: 'lookup',
      input: { query: 'BYD 2024' },
    });
    const last = second.messages.at(-1)!;
    assert.equal(last.content[0]?.type, 'tool_result');
    assert.deepEqual(last.content.at(-1)?.cache_control, { type: 'ephemeral' });
    assert.deepEqual(second.system.at(-1)?.cache_control, { type: 'ephemeral' });
    assert.deepEqual(second.tools.at(-1)?.cache_control, { type: 'ephemeral' });

    // The thought is the thinking; the signature stays in the transcript store.
    assert.deepEqual(
      messages.filter((message) => message.role === 'assistant').map((message) => message.reasoning),
      ['I should look up the 2024 sales.', 'The lookup answers it.'],
    );
    assert.ok(!history.includes(SIGNATURE), 'the signature is not in history');

    assert.equal(result.usage.promptTokens, 2_600);
    assert.equal(result.usage.completionTokens, 42);
    // The cache counts add up in the result: the hit rate is 1,000 / 2,600.
    assert.equal(result.usage.cachedPromptTokens, 1_000);
    assert.equal(result.usage.cacheWriteTokens, 1_300);
    // What the cache saved: 2,600 prompt tokens at input, less what they were charged (call 1's writes cost more).
    const saved = (2_600 * 3 - (200 * 3 + 1_000 * 3.75 + 100 * 3 + 1_000 * 0.3 + 300 * 3.75)) / 1e6;
    assert.ok(Math.abs((result.usage.cacheSavedUsd ?? Number.NaN) - saved) < 1e-12, `${result.usage.cacheSavedUsd}`);
    assert.match(describeResult(result), /, 38% of the prompt tokens read from the cache, saving \$0\.001725\./);
    // Call 1: 200 uncached, 1,000 written; call 2: 100 uncached, 1,000 read, 300 written.
    const expected = (200 * 3 + 1_000 * 3.75 + 30 * 15 + (100 * 3 + 1_000 * 0.3 + 300 * 3.75 + 12 * 15)) / 1e6;
    assert.ok(
      Math.abs((result.usage.costUsd ?? Number.NaN) - expected) < 1e-12,
      `${result.usage.costUsd} ≠ ${expected}`,
    );
  }, 90_000);
});

/** Whether a request is the final-answer call (the loop's last user text asks for it). */
const asksForFinalAnswer = (request: ScriptedRequest) =>
  /Stop calling tools now|Do not (call|use) any more tools/.test(JSON.stringify(request.body.messages?.at(-1) ?? ''));

describe('REACT_AGENT_MODEL_API=anthropic-messages, its errors', () => {
  const scenarios = new Scenarios();
  const environment = startEnvironment(scenarios, 'anthropic-messages', (origin) => ({
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: 'sk-ant-test-0123456789',
  }));

  test('overloaded_error (529) is retried; "prompt is too long" ends the run with its final answer (token_limit)', async () => {
    let overloaded = 0;
    const workflowId = scenarios.add(runId('anthropic-errors'), (turn, request) => {
      if (turn === 1 && overloaded++ === 0)
        return {
          status: 529,
          errorBody: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
          headers: { 'retry-after': '1' },
        };
      if (turn === 1) return replies[0]!;
      if (asksForFinalAnswer(request)) return { content: 'Best guess: BYD.' };
      return {
        status: 400,
        errorBody: {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
        },
      };
    });
    const handle = await environment().startRun(
      { question: 'Who sold more cars in 2024?', protocol: 'native' },
      workflowId,
    );
    const result = (await handle.result()) as ResearchRunResult;
    assert.equal(result.termination, 'token_limit', result.error);
    assert.equal(result.prediction, 'Best guess: BYD.');
    assert.deepEqual(
      environment()
        .requestsOf(workflowId)
        .map((request) => request.status),
      [529, 200, 400, 200],
      'the overload retried, the overflow not',
    );
  }, 90_000);
});

describe('REACT_AGENT_MODEL_API=openai-responses', () => {
  const scenarios = new Scenarios();
  const environment = startEnvironment(scenarios, 'openai-responses', (origin) => ({
    OPENAI_BASE_URL: `${origin}/v1`,
  }));

  test('a function call with reasoning, then the answer: the reasoning item goes back with its encrypted content, cached reads priced', async () => {
    const { result, requests, history } = await researchRun(environment(), scenarios, 'responses');
    assert.equal(result.termination, 'answer', result.error);
    assert.equal(result.prediction, 'BYD sold more cars than Tesla in 2024.');
    assert.deepEqual(
      requests.map((request: ScriptedRequest) => request.api),
      ['openai-responses', 'openai-responses'],
    );
    const second = requests[1]!.body as { store: boolean; include: string[]; input: Array<Record<string, unknown>> };
    assert.equal(second.store, false);
    assert.deepEqual(second.include, ['reasoning.encrypted_content']);
    const reasoning = second.input.find((item) => item.type === 'reasoning');
    assert.equal(reasoning?.encrypted_content, SIGNATURE);
    const call = second.input.findIndex((item) => item.type === 'function_call');
    assert.ok(second.input.indexOf(reasoning!) < call, 'the reasoning item comes before its function call');
    assert.deepEqual(second.input[call + 1], {
      type: 'function_call_output',
      call_id: 'call_1',
      output: second.input[call + 1]?.output,
    });
    assert.match(String(second.input[call + 1]?.output), /BYD sold 4,272,145/);
    assert.ok(!history.includes(SIGNATURE), 'the encrypted reasoning is not in history');

    assert.equal(result.usage.cachedPromptTokens, 1_000);
    assert.equal(result.usage.cacheWriteTokens, undefined);
    // The Responses API reports no cache writes: call 1 all uncached, call 2 1,000 read.
    const expected = (1_200 * 3 + 30 * 15 + (400 * 3 + 1_000 * 0.3 + 12 * 15)) / 1e6;
    assert.ok(
      Math.abs((result.usage.costUsd ?? Number.NaN) - expected) < 1e-12,
      `${result.usage.costUsd} ≠ ${expected}`,
    );
  }, 90_000);
});
