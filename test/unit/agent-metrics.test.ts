import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ActivityCancellationDetails } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { createCallModel } from '../../activities/model-activity';
import { characterEstimateCounter } from '../../activities/token-counter';
import { withToolCallMetrics } from '../../activities/tools/tool-call-metrics';
import { CostTotals } from '../../activities/metrics/model-call-metrics';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type {
  CallModelInput,
  CallModelOutput,
  ToolActivityInput,
  ToolActivityOutput,
} from '../../src/core/activity-contracts';
import {
  AgentMetrics,
  agentHistogramBuckets,
  MODEL_CALL_OUTCOMES,
  TOOL_CALL_OUTCOMES,
  type AgentMetricDefinition,
} from '../../src/core/agent-metrics';
import { FailureTypes } from '../../src/core/failure-types';
import { putConversation, putMessage } from '../../src/storage/conversation';
import {
  deltaChunk,
  fakeOpenAI,
  stallingStream,
  streamOf,
  usageChunk,
  chatModelOver,
} from '../fakes/fake-chat-completions';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';
import { RecordingMetricMeter } from '../fakes/recording-metric-meter';

const quietLogger = new DefaultLogger('ERROR', () => undefined);
const definitions = Object.values(AgentMetrics) as AgentMetricDefinition[];

function environment() {
  const meter = new RecordingMetricMeter();
  const env = new MockActivityEnvironment(
    { heartbeatTimeoutMs: 5_000, activityType: 'callModel' },
    { logger: quietLogger, metricMeter: meter },
  );
  return { env, meter };
}

describe('the agent metric definitions (src/core/agent-metrics.ts)', () => {
  test('names are unique, counters end in _total, histograms are in seconds with ascending buckets', () => {
    assert.equal(new Set(definitions.map((metric) => metric.name)).size, definitions.length);
    for (const metric of definitions) {
      assert.match(metric.name, /^react_agent_[a-z_]+$/);
      if (metric.kind === 'counter') assert.match(metric.name, /_total$/, metric.name);
      if (metric.kind === 'histogram') {
        assert.match(metric.name, /_seconds$/, metric.name);
        const buckets = metric.buckets ?? [];
        assert.ok(buckets.length >= 5, metric.name);
        assert.ok(
          buckets.every((bound, index) => bound > 0 && (index === 0 || bound > (buckets[index - 1] as number))),
          `${metric.name} buckets ascend`,
        );
      }
    }
    assert.deepEqual(
      Object.keys(agentHistogramBuckets()).sort(),
      definitions
        .filter((metric) => metric.kind === 'histogram')
        .map((metric) => metric.name)
        .sort(),
    );
  });

  test("the issue's metrics and label sets", () => {
    const labelsOf = Object.fromEntries(definitions.map((metric) => [metric.name, [...metric.labels]]));
    assert.deepEqual(labelsOf, {
      react_agent_model_calls_total: ['model', 'outcome'],
      react_agent_model_call_seconds: ['model', 'outcome'],
      react_agent_model_first_token_seconds: ['model'],
      react_agent_model_limit_wait_seconds: ['model', 'limit'],
      react_agent_model_limit_pauses_total: ['model'],
      react_agent_tokens_total: ['model', 'kind'],
      react_agent_cost_usd_total: ['model'],
      react_agent_cache_saved_usd_total: ['model'],
      react_agent_tool_calls_total: ['tool', 'outcome'],
      react_agent_tool_call_seconds: ['tool'],
      react_agent_runs_finished_total: ['termination', 'role'],
    });
  });

  test('every ReactAgent.Model.* failure type has its own outcome', () => {
    const modelFailures = Object.values(FailureTypes).filter((type) => type.startsWith('ReactAgent.Model.'));
    for (const type of modelFailures) {
      const outcome = type
        .slice('ReactAgent.Model.'.length)
        .replace(/([a-z])([A-Z])/g, '$1_$2')
        .toLowerCase();
      assert.ok((MODEL_CALL_OUTCOMES as readonly string[]).includes(outcome), `${type} → ${outcome}`);
    }
    assert.ok(TOOL_CALL_OUTCOMES.includes('timed_out'));
  });
});

async function startedConversation() {
  const store = new MemoryTranscriptStore();
  const conversation = await putConversation(store, [
    await putMessage(store, { role: 'system', content: 'System.' }),
    await putMessage(store, { role: 'user', content: 'Two plus two?' }),
  ]);
  return { store, conversation };
}

function callInput(conversation: string): CallModelInput {
  return {
    workflowId: 'wf-metrics',
    modelCall: 1,
    conversation,
    append: [],
    model: { model: 'qwen-test' },
    protocol: 'deep-research',
    tools: [],
  };
}

const MODEL_DEFAULTS = { model: 'default-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1024 };

function callModelWith(openai: OpenAI, store: MemoryTranscriptStore) {
  return createCallModel({
    chatModel: chatModelOver(openai),
    store,
    tokenCounter: characterEstimateCounter,
    modelDefaults: MODEL_DEFAULTS,
    tools: new ToolRegistry(),
  });
}

describe('callModel records react_agent_model_* through the activity metric meter', () => {
  test('a call that streams: one ok call, its duration, the first token, and every token kind the usage reports', async () => {
    const { store, conversation } = await startedConversation();
    const usage = {
      ...usageChunk(120, 30),
      usage: {
        prompt_tokens: 120,
        completion_tokens: 30,
        total_tokens: 150,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    };
    const { openai } = fakeOpenAI(() =>
      streamOf(
        [deltaChunk({ role: 'assistant', content: '<answer>4' }), deltaChunk({ content: '</answer>' }, 'stop'), usage],
        { firstDelayMs: 30 },
      ),
    );
    const { env, meter } = environment();
    const output = (await env.run(callModelWith(openai, store), callInput(conversation))) as CallModelOutput;

    assert.deepEqual(
      meter.of(AgentMetrics.modelCalls.name).map((record) => [record.value, record.tags.model, record.tags.outcome]),
      [[1, 'qwen-test', 'ok']],
    );
    assert.equal(
      meter.of(AgentMetrics.modelCalls.name)[0]?.tags.activityType,
      'callModel',
      "the SDK's tags come along",
    );
    const [firstToken] = meter.of(AgentMetrics.modelFirstTokenSeconds.name);
    assert.ok(
      firstToken && firstToken.value >= 0.02 && firstToken.value < 5,
      `first token after ${firstToken?.value} s`,
    );
    const [duration] = meter.of(AgentMetrics.modelCallSeconds.name);
    assert.ok(duration && duration.value >= firstToken.value, 'the call lasts at least until its first token');
    assert.deepEqual(duration.tags.outcome, 'ok');
    const tokens = Object.fromEntries(
      meter.of(AgentMetrics.tokens.name).map((record) => [record.tags.kind, record.value]),
    );
    assert.deepEqual(tokens, { prompt: 120, completion: 30, reasoning: 12, cached: 64 });
    assert.deepEqual(
      output.usage,
      { promptTokens: 120, completionTokens: 30, totalTokens: 150, cachedPromptTokens: 64 },
      'the same numbers as the result',
    );
  });

  test('without reported usage: prompt and completion are the estimates the result carries; no reasoning or cached', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() =>
      streamOf([deltaChunk({ role: 'assistant', content: '<answer>4</answer>' }, 'stop')]),
    );
    const { env, meter } = environment();
    const output = (await env.run(callModelWith(openai, store), callInput(conversation))) as CallModelOutput;
    const tokens = Object.fromEntries(
      meter.of(AgentMetrics.tokens.name).map((record) => [record.tags.kind, record.value]),
    );
    assert.deepEqual(tokens, { prompt: output.usage.promptTokens, completion: output.usage.completionTokens });
  });

  test('with a price for the model: the cost (cached prompt tokens at the cached price) returned with the usage and the process total set on the USD gauge', async () => {
    const { store, conversation } = await startedConversation();
    const usage = {
      ...usageChunk(1_000, 200),
      usage: {
        prompt_tokens: 1_000,
        completion_tokens: 200,
        total_tokens: 1_200,
        prompt_tokens_details: { cached_tokens: 400 },
      },
    };
    const { openai } = fakeOpenAI(() =>
      streamOf([deltaChunk({ role: 'assistant', content: '<answer>4</answer>' }, 'stop'), usage]),
    );
    const prices = { 'qwen-test': { input: 0.15, cachedInput: 0.075, output: 0.6 } };
    const { env, meter } = environment();
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: new ToolRegistry(),
      prices,
    });
    const output = (await env.run(callModel, callInput(conversation))) as CallModelOutput;
    // 600 × 0.15 + 400 × 0.075 + 200 × 0.6 per million = 0.00024 USD.
    assert.ok(Math.abs((output.usage.costUsd ?? Number.NaN) - 0.00024) < 1e-12, `cost ${output.usage.costUsd}`);
    const [first] = meter.of(AgentMetrics.cost.name);
    assert.equal(first?.kind, 'gauge');
    assert.equal(first?.tags.model, 'qwen-test');
    assert.ok(first && first.value >= 0.00024 - 1e-12, `the gauge holds the process's total so far: ${first?.value}`);
    // A second call adds its cost to the same series' total: the gauge grows as a counter would.
    const again = (await env.run(callModel, callInput(conversation))) as CallModelOutput;
    const [, second] = meter.of(AgentMetrics.cost.name);
    assert.ok(
      second && Math.abs(second.value - (first.value + (again.usage.costUsd ?? Number.NaN))) < 1e-12,
      `${second?.value} = ${first.value} + ${again.usage.costUsd}`,
    );
  });

  test('what prompt caching saved: returned with the usage, the process total on its own USD gauge', async () => {
    const { store, conversation } = await startedConversation();
    const usage = {
      ...usageChunk(1_000, 200),
      usage: {
        prompt_tokens: 1_000,
        completion_tokens: 200,
        total_tokens: 1_200,
        prompt_tokens_details: { cached_tokens: 400 },
      },
    };
    const { openai } = fakeOpenAI(() =>
      streamOf([deltaChunk({ role: 'assistant', content: '<answer>4</answer>' }, 'stop'), usage]),
    );
    const { env, meter } = environment();
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: new ToolRegistry(),
      prices: { 'qwen-test': { input: 0.15, cachedInput: 0.075, output: 0.6 } },
    });
    const output = (await env.run(callModel, callInput(conversation))) as CallModelOutput;
    // 400 cached tokens at 0.075 instead of 0.15 per million.
    const saved = (400 * 0.075) / 1e6;
    assert.ok(Math.abs((output.usage.cacheSavedUsd ?? Number.NaN) - saved) < 1e-12, `${output.usage.cacheSavedUsd}`);
    const [gauge] = meter.of(AgentMetrics.cacheSaved.name);
    assert.equal(gauge?.kind, 'gauge');
    assert.equal(gauge?.tags.model, 'qwen-test');
    assert.ok(gauge && gauge.value >= saved - 1e-12, `the process's total so far: ${gauge?.value}`);
  });

  test('the running totals behind the gauge: one per series, only growing', () => {
    const totals = new CostTotals();
    assert.equal(totals.add(['default', 'q', 'a'], 0.25), 0.25);
    assert.equal(totals.add(['default', 'q', 'b'], 1), 1, 'another model is another series');
    assert.equal(totals.add(['default', 'q', 'a'], 0.5), 0.75);
    assert.equal(totals.add(['default', 'other-queue', 'a'], 0.1), 0.1, 'another task queue is another series');
  });

  test('a model without a price has no cost (absent, not zero) and counts none', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() =>
      streamOf([deltaChunk({ role: 'assistant', content: '<answer>4</answer>' }, 'stop'), usageChunk(100, 10)]),
    );
    const { env, meter } = environment();
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: new ToolRegistry(),
      prices: { 'other-model': { input: 1, output: 1 } },
    });
    const output = (await env.run(callModel, callInput(conversation))) as CallModelOutput;
    assert.equal('costUsd' in output.usage, false);
    assert.deepEqual(meter.of(AgentMetrics.cost.name), []);
    assert.deepEqual(meter.of(AgentMetrics.cacheSaved.name), []);
  });

  test('a rate-limited call is counted with outcome rate_limited, timed, with no first token and no tokens', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() => {
      throw OpenAI.APIError.generate(
        429,
        { error: { message: 'slow down' } },
        undefined,
        new Headers({ 'retry-after': '3' }),
      );
    });
    const { env, meter } = environment();
    await assert.rejects(env.run(callModelWith(openai, store), callInput(conversation)) as Promise<unknown>);
    assert.deepEqual(
      meter.of(AgentMetrics.modelCalls.name).map((record) => record.tags.outcome),
      ['rate_limited'],
    );
    assert.deepEqual(
      meter.of(AgentMetrics.modelCallSeconds.name).map((record) => record.tags.outcome),
      ['rate_limited'],
    );
    assert.equal(meter.of(AgentMetrics.modelFirstTokenSeconds.name).length, 0);
    assert.equal(meter.of(AgentMetrics.tokens.name).length, 0);
  });

  test('a server error and an unreachable server have their own outcomes', async () => {
    for (const [error, outcome] of [
      [OpenAI.APIError.generate(503, { error: { message: 'overloaded' } }, undefined, new Headers()), 'server_error'],
      [
        new OpenAI.APIConnectionError({
          message: 'Connection error.',
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
        'unreachable',
      ],
    ] as const) {
      const { store, conversation } = await startedConversation();
      const { openai } = fakeOpenAI(() => {
        throw error;
      });
      const { env, meter } = environment();
      await assert.rejects(env.run(callModelWith(openai, store), callInput(conversation)) as Promise<unknown>);
      assert.deepEqual(
        meter.of(AgentMetrics.modelCalls.name).map((record) => record.tags.outcome),
        [outcome],
      );
    }
  });

  test('a cancelled call is cancelled; one the worker timed out is timed_out', async () => {
    for (const [details, outcome] of [
      [new ActivityCancellationDetails({ cancelRequested: true }), 'cancelled'],
      [new ActivityCancellationDetails({ timedOut: true, notFound: true }), 'timed_out'],
      [new ActivityCancellationDetails({ workerShutdown: true }), 'cancelled'],
    ] as const) {
      const { store, conversation } = await startedConversation();
      const { openai } = fakeOpenAI((call) =>
        stallingStream([deltaChunk({ role: 'assistant', content: 'Thinking' })], call.options.signal),
      );
      const { env, meter } = environment();
      const running = env.run(callModelWith(openai, store), callInput(conversation)) as Promise<unknown>;
      await new Promise((resolve) => setTimeout(resolve, 50));
      env.cancel(details.timedOut ? 'TIMED_OUT' : details.workerShutdown ? 'WORKER_SHUTDOWN' : 'CANCELLED', details);
      await assert.rejects(running);
      assert.deepEqual(
        meter.of(AgentMetrics.modelCalls.name).map((record) => record.tags.outcome),
        [outcome],
      );
      assert.equal(meter.of(AgentMetrics.modelFirstTokenSeconds.name).length, 1, 'the first chunk had come');
    }
  });

  test('an attempt that fails before its request is sent (the transcript is missing) is no model call', async () => {
    const store = new MemoryTranscriptStore();
    const { openai, calls } = fakeOpenAI(() => streamOf([deltaChunk({ content: 'x' }, 'stop')]));
    const { env, meter } = environment();
    await assert.rejects(
      env.run(callModelWith(openai, store), callInput(`sha256:${'0'.repeat(64)}`)) as Promise<unknown>,
    );
    assert.equal(calls.length, 0);
    assert.equal(meter.records.length, 0);
  });
});

describe('withToolCallMetrics records react_agent_tool_* for each attempt', () => {
  const input: ToolActivityInput = {
    workflowId: 'wf',
    callId: 'call-1-1',
    arguments: {},
    maxObservationCharacters: 100,
  };
  const output = (isError: boolean): ToolActivityOutput => ({
    observation: { ref: 'sha256:x', preview: 'x', characters: 1 },
    isError,
    tokens: 1,
  });

  async function attempt(
    activity: (input: ToolActivityInput) => Promise<ToolActivityOutput>,
    cancelWith?: ActivityCancellationDetails,
  ) {
    const meter = new RecordingMetricMeter();
    const env = new MockActivityEnvironment({ activityType: 'lookup' }, { logger: quietLogger, metricMeter: meter });
    const wrapped = withToolCallMetrics('lookup', activity);
    const running = env.run(wrapped, input) as Promise<ToolActivityOutput>;
    if (cancelWith) env.cancel(cancelWith.timedOut ? 'TIMED_OUT' : 'CANCELLED', cancelWith);
    await running.catch(() => undefined);
    const calls = meter.of(AgentMetrics.toolCalls.name);
    assert.equal(calls.length, 1);
    assert.equal(meter.of(AgentMetrics.toolCallSeconds.name).length, 1);
    assert.equal(meter.of(AgentMetrics.toolCallSeconds.name)[0]?.tags.tool, 'lookup');
    return calls[0]?.tags.outcome;
  }

  const untilCancelled = () =>
    new Promise<ToolActivityOutput>((_, reject) => {
      const { Context } = require('@temporalio/activity') as typeof import('@temporalio/activity');
      Context.current().cancelled.catch(reject);
    });

  test('ok, error (an error observation), failed (the attempt threw), cancelled, timed_out', async () => {
    assert.equal(await attempt(async () => output(false)), 'ok');
    assert.equal(await attempt(async () => output(true)), 'error');
    assert.equal(await attempt(async () => Promise.reject(new Error('backend down'))), 'failed');
    assert.equal(
      await attempt(untilCancelled, new ActivityCancellationDetails({ cancelRequested: true })),
      'cancelled',
    );
    assert.equal(await attempt(untilCancelled, new ActivityCancellationDetails({ timedOut: true })), 'timed_out');
    assert.equal(
      await attempt(untilCancelled, new ActivityCancellationDetails({ notFound: true })),
      'timed_out',
      'the server no longer knew the attempt',
    );
  });

  test('the wrapped activity keeps its name', () => {
    const named = Object.defineProperty(async () => output(false), 'name', { value: 'lookup' });
    assert.equal(withToolCallMetrics('lookup', named).name, 'lookup');
  });
});
