import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentActivities } from '../../activities';
import type { ChatModel } from '../../activities/model/chat-model';
import { summaryModelOf } from '../../activities/model/summary-chat-model';
import { characterEstimateCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { createModelPageSummarizer } from '../../activities/tools/visit/page-summarizer';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadSummaryModelConfig } from '../../src/config/summary-model-config';
import type { CompressContextInput, CompressContextOutput } from '../../src/core/activity-contracts';
import type { ChatMessage } from '../../src/core/messages';
import { putConversation, putMessage } from '../../src/storage/conversation';
import { fakeChatModel } from '../fakes/fake-chat-model';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const SECRET = 'sk-ant-SECRET-do-not-print-1234567890';
const RUN_MODEL = { OPENAI_BASE_URL: 'http://localhost:8000/v1', REACT_AGENT_MODEL: 'Qwen/Qwen3-8B' };

function configurationError(fn: () => unknown, variable: string, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigurationError, `a ConfigurationError for ${variable}`);
  assert.equal(caught.variable, variable);
  for (const pattern of patterns) assert.match(caught.message, pattern);
  assert.ok(!caught.message.includes(SECRET), 'the key is never in a message');
}

describe('REACT_AGENT_SUMMARY_MODEL_API and REACT_AGENT_SUMMARY_MODEL (src/config/summary-model-config.ts)', () => {
  test("unset: the run model's API and endpoint, and no model of its own (each run's)", () => {
    assert.deepEqual(loadSummaryModelConfig(RUN_MODEL), {
      api: 'openai-chat',
      sameApiAsRunModel: true,
      baseUrl: 'http://localhost:8000/v1',
      apiKey: 'not-needed',
    });
  });

  test('a smaller model on the same endpoint', () => {
    const config = loadSummaryModelConfig({ ...RUN_MODEL, REACT_AGENT_SUMMARY_MODEL: 'Qwen/Qwen3-0.6B' });
    assert.equal(config.model, 'Qwen/Qwen3-0.6B');
    assert.equal(config.sameApiAsRunModel, true);
  });

  test("another API: that API's endpoint and key", () => {
    const config = loadSummaryModelConfig({
      ...RUN_MODEL,
      ANTHROPIC_API_KEY: SECRET,
      REACT_AGENT_SUMMARY_MODEL_API: 'anthropic-messages',
      REACT_AGENT_SUMMARY_MODEL: 'claude-haiku-4-5',
    });
    assert.deepEqual(config, {
      api: 'anthropic-messages',
      sameApiAsRunModel: false,
      baseUrl: 'https://api.anthropic.com',
      apiKey: SECRET,
      model: 'claude-haiku-4-5',
    });
    // The Responses API beside Chat Completions: the same provider, so the run's model name will do.
    const responses = loadSummaryModelConfig({ ...RUN_MODEL, REACT_AGENT_SUMMARY_MODEL_API: 'openai-responses' });
    assert.equal(responses.api, 'openai-responses');
    assert.equal(responses.sameApiAsRunModel, false);
    assert.equal(responses.baseUrl, 'http://localhost:8000/v1');
    assert.equal(responses.model, undefined);
  });

  test('refused, naming the variable: an unknown API, another provider without a model, an API without an endpoint', () => {
    configurationError(
      () => loadSummaryModelConfig({ ...RUN_MODEL, REACT_AGENT_SUMMARY_MODEL_API: 'claude' }),
      'REACT_AGENT_SUMMARY_MODEL_API',
      /must be one of openai-chat, openai-responses, anthropic-messages/,
    );
    configurationError(
      () =>
        loadSummaryModelConfig({
          ...RUN_MODEL,
          ANTHROPIC_API_KEY: SECRET,
          REACT_AGENT_SUMMARY_MODEL_API: 'anthropic-messages',
        }),
      'REACT_AGENT_SUMMARY_MODEL',
      /REACT_AGENT_SUMMARY_MODEL_API=anthropic-messages is another provider's API than the run model's \(openai-chat\)/,
    );
    configurationError(
      () =>
        loadSummaryModelConfig({
          ...RUN_MODEL,
          REACT_AGENT_SUMMARY_MODEL_API: 'anthropic-messages',
          REACT_AGENT_SUMMARY_MODEL: 'claude-haiku-4-5',
        }),
      'ANTHROPIC_BASE_URL',
      /REACT_AGENT_SUMMARY_MODEL_API=anthropic-messages has no endpoint/,
    );
  });
});

/** A conversation of `turns` deep-research turns, each a call and a long observation. */
async function storedTurns(store: MemoryTranscriptStore, turns: number): Promise<string> {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a deep research assistant.' },
    { role: 'user', content: 'Which company sold more cars in 2024?' },
  ];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({
      role: 'assistant',
      content: `<tool_call>\n{"name": "lookup", "arguments": {"query": "q${turn}"}}\n</tool_call>`,
    });
    messages.push({ role: 'user', content: `<tool_response>\n${'BYD sold more. '.repeat(60)}\n</tool_response>` });
  }
  return putConversation(store, await Promise.all(messages.map((message) => putMessage(store, message))));
}

/** The compression activity as the worker registers it (activities/index.ts), folding every turn into a summary. */
async function compress(runModel: ChatModel, summary?: { chatModel: ChatModel; model?: string }) {
  const store = new MemoryTranscriptStore();
  const { compressContext } = createAgentActivities({
    chatModel: runModel,
    ...(summary ? { summary } : {}),
    store,
    tools: new ToolRegistry([]),
    modelDefaults: { model: 'run-model', temperature: 0, topP: 1, maxOutputTokens: 10 },
    modelActivity: { startToCloseSeconds: 1, heartbeatSeconds: 1, maxAttempts: 1 },
    tokenCounter: characterEstimateCounter,
  });
  const input: CompressContextInput = {
    workflowId: 'wf',
    conversation: await storedTurns(store, 3),
    append: [],
    protocol: 'deep-research',
    question: 'Which company sold more cars in 2024?',
    keepRecentTurns: 0,
    targetTokens: 50,
    summarize: true,
    model: { model: 'the-runs-model' },
  };
  return (await new MockActivityEnvironment().run(compressContext, input)) as CompressContextOutput;
}

describe("compression's summaries go to the summaries' ChatModel and model", () => {
  test('configured: the summary client, asked for the summary model; the run model never called', async () => {
    const runModel = fakeChatModel(() => new Error('the run model writes no summary'));
    const summaryModel = fakeChatModel(() => 'SUMMARY: BYD.');
    const output = await compress(runModel, { chatModel: summaryModel, model: 'small-summariser' });
    assert.equal(output.summarizedTurns, 3);
    assert.equal(runModel.calls.length, 0);
    assert.ok(summaryModel.calls.length > 0);
    assert.deepEqual(new Set(summaryModel.calls.map((call) => call.request.model)), new Set(['small-summariser']));
    assert.equal(summaryModel.calls[0]?.request.labels?.purpose, 'summary');
  });

  test("another client, no model of its own: each run's model", async () => {
    const summaryModel = fakeChatModel(() => 'SUMMARY: BYD.');
    await compress(
      fakeChatModel(() => new Error('unused')),
      { chatModel: summaryModel },
    );
    assert.deepEqual(new Set(summaryModel.calls.map((call) => call.request.model)), new Set(['the-runs-model']));
  });

  test("unset: the run model's client and the run's model, as before", async () => {
    const runModel = fakeChatModel(() => 'SUMMARY: BYD.');
    const output = await compress(runModel);
    assert.equal(output.summarizedTurns, 3);
    assert.deepEqual(new Set(runModel.calls.map((call) => call.request.model)), new Set(['the-runs-model']));
  });
});

describe("the worker's summary client (activities/model/summary-chat-model.ts) and the visit tool's page summariser", () => {
  const page = { goal: 'BYD 2024 sales?', url: 'https://news.example/byd', title: 'BYD', markdown: 'BYD sold 4.27M.' };
  const extraction = JSON.stringify({ rational: 'r', evidence: 'BYD sold 4.27M.', summary: 'BYD sold 4.27M.' });
  const controls = () => ({ signal: new AbortController().signal, heartbeat: () => undefined });

  test("another API: a client of its own on that API's endpoint; visit asks it for the summary model", async () => {
    const runModel = fakeChatModel(() => new Error('the run model summarises no page'));
    const own = fakeChatModel(() => extraction);
    const endpoints: unknown[] = [];
    const summary = summaryModelOf(
      {
        api: 'anthropic-messages',
        sameApiAsRunModel: false,
        baseUrl: 'https://api.anthropic.com',
        apiKey: SECRET,
        model: 'claude-haiku-4-5',
      },
      runModel,
      'Qwen/Qwen3-8B',
      { timeoutSeconds: 30 },
      (endpoint) => {
        endpoints.push(endpoint);
        return own;
      },
    );
    assert.deepEqual(endpoints, [
      { api: 'anthropic-messages', baseUrl: 'https://api.anthropic.com', apiKey: SECRET, timeoutSeconds: 30 },
    ]);
    assert.equal(summary.chatModel, own);
    assert.equal(summary.model, 'claude-haiku-4-5');
    const summarizer = createModelPageSummarizer({ chatModel: summary.chatModel, model: summary.visitModel });
    await summarizer.summarize(page, controls());
    assert.equal(runModel.calls.length, 0);
    assert.deepEqual(
      own.calls.map((call) => call.request.model),
      ['claude-haiku-4-5'],
    );
  });

  test("unset: the run model's client; compression asks for each run's model, visit for the worker's", () => {
    const runModel = fakeChatModel(() => extraction);
    const config = loadSummaryModelConfig(RUN_MODEL);
    const summary = summaryModelOf(config, runModel, 'Qwen/Qwen3-8B', {}, () => {
      throw new Error('no client of its own');
    });
    assert.equal(summary.chatModel, runModel);
    assert.equal('model' in summary, false);
    assert.equal(summary.visitModel, 'Qwen/Qwen3-8B');
  });
});
