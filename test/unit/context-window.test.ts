import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import OpenAI from 'openai';
import { createLearnContextWindow } from '../../activities/context-window-activity';
import { OpenAIChatModel } from '../../activities/model/openai-chat-model';
import { serverOrigin } from '../../activities/model/openai-context-window';
import { classifyModelError } from '../../activities/model/openai-errors';
import { progressLines } from '../../src/cli/progress-lines';
import {
  didNotFitPrediction,
  finalAnswerCompressionTarget,
  finalAnswerDidNotFit,
  finalAnswerFits,
  finalAnswerFitSteps,
  finalAnswerPromptLimit,
  finalReplyRoom,
  learnedContextWindow,
  learnedFromOverflow,
  MIN_SUMMARY_PIECE_TOKENS,
  OLLAMA_DEFAULT_CONTEXT_TOKENS,
  promptBudgetOf,
  replyReserve,
  summaryLimits,
  summaryLimitsAfterRefusal,
  windowMargin,
  windowOfLlamaServerProps,
  windowOfOllamaPs,
  windowOfOllamaShow,
  windowOfOverflowMessage,
  windowOfVllmModels,
  withConversationOf,
  withSummaryLimits,
} from '../../src/core/context-window';
import { appendPendingText, setPending } from '../../src/core/pending';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import {
  compressionDue,
  compressionTarget,
  contextBudget,
  contextOverLimit,
  remainingBudgets,
} from '../../src/core/run-budgets';
import { concludeRun } from '../../src/core/run-ending';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS } from '../../src/core/run-limits';
import type { RunState } from '../../src/core/run-state';
import {
  askForFinalAnswer,
  finalAnswerRequest,
  initialRunState,
  prepareFinalAnswer,
} from '../../src/core/run-transitions';
import { CONTEXT_OVERFLOW_RESPONSES, llamaServerContextOverflowBody } from '../fakes/model-server-error-bodies';

const fresh = (maxContextTokens = DEFAULT_LIMITS.maxContextTokens): RunState =>
  initialRunState('deep-research', { ...DEFAULT_LIMITS, maxContextTokens }, 1_000);
/** A run that learned a 4,096-token window with the worker's default of 10,000 output tokens. */
const withWindow = (window = 4_096, state = fresh()): RunState =>
  learnedContextWindow(state, {
    contextWindow: window,
    source: 'llama-server /props (default_generation_settings.n_ctx)',
    maxOutputTokens: 10_000,
  });
const at = (state: RunState, contextTokens: number): RunState => ({ ...state, contextTokens });

describe("each server's answer", () => {
  test('vLLM: max_model_len of the model named in /v1/models, else of the only one listed', () => {
    const body = {
      object: 'list',
      data: [
        { id: 'qwen', max_model_len: 32_768 },
        { id: 'qwen-lora', max_model_len: 8_192 },
      ],
    };
    assert.deepEqual(windowOfVllmModels(body, 'qwen-lora'), {
      tokens: 8_192,
      source: 'vLLM /v1/models (max_model_len)',
    });
    assert.equal(windowOfVllmModels(body, 'other'), undefined, 'two models and neither named: no guess');
    assert.equal(windowOfVllmModels({ data: [{ id: 'served', max_model_len: 4_096 }] }, 'alias')?.tokens, 4_096);
  });

  test('OpenAI, llama-server, Ollama: /v1/models without max_model_len says nothing', () => {
    assert.equal(
      windowOfVllmModels({ object: 'list', data: [{ id: 'gpt-4o', object: 'model', owned_by: 'openai' }] }, 'gpt-4o'),
      undefined,
    );
    // llama-server lists the training context in meta.n_ctx_train: not the window it runs with.
    assert.equal(windowOfVllmModels({ data: [{ id: 'tiny', meta: { n_ctx_train: 131_072 } }] }, 'tiny'), undefined);
    assert.equal(windowOfVllmModels('Not Found', 'x'), undefined);
  });

  test("llama-server: /props' per-slot default_generation_settings.n_ctx, else its top-level n_ctx", () => {
    assert.deepEqual(
      windowOfLlamaServerProps({ default_generation_settings: { n_ctx: 4_096, params: {} }, total_slots: 1 }),
      {
        tokens: 4_096,
        source: 'llama-server /props (default_generation_settings.n_ctx)',
      },
    );
    assert.deepEqual(windowOfLlamaServerProps({ n_ctx: 8_192 }), {
      tokens: 8_192,
      source: 'llama-server /props (n_ctx)',
    });
    assert.equal(windowOfLlamaServerProps({ default_generation_settings: { n_ctx: 0 } }), undefined);
    assert.equal(windowOfLlamaServerProps(null), undefined);
  });

  test("Ollama: the loaded model's context_length in /api/ps (by name, with or without :latest)", () => {
    const ps = {
      models: [
        { name: 'llama3.2:latest', model: 'llama3.2:latest', context_length: 4_096 },
        { name: 'qwen3:8b', model: 'qwen3:8b', context_length: 40_960 },
      ],
    };
    assert.equal(windowOfOllamaPs(ps, 'llama3.2')?.tokens, 4_096);
    assert.equal(windowOfOllamaPs(ps, 'qwen3:8b')?.tokens, 40_960);
    assert.equal(windowOfOllamaPs(ps, 'mistral'), undefined, 'not loaded');
    assert.equal(
      windowOfOllamaPs({ models: [{ name: 'llama3.2:latest' }] }, 'llama3.2'),
      undefined,
      'older releases do not say',
    );
  });

  test("Ollama: /api/show's num_ctx parameter, else Ollama's default context at most the model's own", () => {
    const parameters = 'num_ctx                        8192\nstop                           "<|im_end|>"';
    assert.deepEqual(windowOfOllamaShow({ parameters, model_info: { 'llama.context_length': 131_072 } }), {
      tokens: 8_192,
      source: 'Ollama /api/show (parameter num_ctx)',
    });
    const unset = windowOfOllamaShow({
      parameters: 'stop "<|im_end|>"',
      model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': 32_768 },
    });
    assert.equal(unset?.tokens, OLLAMA_DEFAULT_CONTEXT_TOKENS);
    assert.match(unset?.source ?? '', /Ollama's default context, the model allows 32,768/);
    assert.equal(
      windowOfOllamaShow({ model_info: { 'gemma.context_length': 2_048 } })?.tokens,
      2_048,
      'a model smaller than the default keeps its own',
    );
    assert.equal(windowOfOllamaShow({ license: '…' }), undefined);
  });
});

describe('the window a context-length refusal names', () => {
  const named: Record<string, number | undefined> = {
    'OpenAI chat completions': 128_000,
    'OpenAI (newer models)': undefined,
    'vLLM 0.10–0.11': 32_768,
    'vLLM 0.10–0.11, max_tokens too large': 32_768,
    'vLLM 2026': 4_096,
    'llama-server (llama.cpp, current)': 8_192,
    'llama-server (llama.cpp, without context shift)': 8_192,
    'Ollama /v1 (context shift off)': undefined,
    'Ollama /v1 (truncate off)': 4_096,
    'Ollama /v1 (embedding-style input check)': undefined,
    'TGI (text-generation-inference), total tokens': 4_096,
    'TGI (text-generation-inference), input length': undefined,
    'SGLang / Together': 200_000,
  };

  test('every real body is in the table', () => {
    assert.deepEqual(CONTEXT_OVERFLOW_RESPONSES.map((response) => response.server).sort(), Object.keys(named).sort());
  });

  test.each(CONTEXT_OVERFLOW_RESPONSES.map((response) => [response.server, response] as const))(
    '%s',
    (server, response) => {
      // As the workflow reads it: the message of the failure the model activity throws.
      const error = OpenAI.APIError.generate(
        response.status,
        response.body as Record<string, unknown>,
        undefined,
        new Headers({ 'content-type': 'application/json' }),
      );
      const failure = classifyModelError(error, { baseUrl: 'http://localhost:8080/v1', model: 'm' });
      assert.equal(windowOfOverflowMessage(failure.message), named[server]);
    },
  );

  test("issue 16's refusal, numbers with separators, and texts that name no window", () => {
    assert.equal(
      windowOfOverflowMessage(
        '400 request (4240 tokens) exceeds the available context size (4096 tokens), try increasing it',
      ),
      4_096,
    );
    assert.equal(windowOfOverflowMessage("This model's maximum context length is 128,000 tokens."), 128_000);
    assert.equal(windowOfOverflowMessage('prompt is too long: 210000 tokens > 200000 maximum'), 200_000);
    assert.equal(windowOfOverflowMessage('Request too large'), undefined);
    assert.equal(windowOfOverflowMessage('maximum context length is 3 tokens'), undefined, 'nonsense is not a window');
  });
});

describe('the context budget', () => {
  test('a window keeps the reply (max output tokens, at most a quarter) and a margin; the prompt gets the rest', () => {
    assert.equal(replyReserve(4_096, 10_000), 1_024);
    assert.equal(replyReserve(131_072, 10_000), 10_000);
    assert.equal(replyReserve(4_096, undefined), 1_024, 'unknown max output tokens: the quarter');
    assert.equal(windowMargin(4_096), 123);
    assert.equal(windowMargin(512), 32);
    assert.equal(windowMargin(1_000_000), 2_048);
    assert.equal(promptBudgetOf(4_096, 10_000), 2_949);
    assert.equal(promptBudgetOf(131_072, 10_000), 131_072 - 10_000 - 2_048);
  });

  test('the run budget is the smaller of maxContextTokens and the prompt budget; unknown window: maxContextTokens as before', () => {
    assert.equal(contextBudget(fresh()), 110_000);
    assert.equal(contextBudget(withWindow()), 2_949);
    assert.equal(contextBudget(withWindow(131_072, fresh(8_000))), 8_000);
    const state = withWindow();
    assert.equal(contextOverLimit(at(state, 2_949)), false);
    assert.equal(contextOverLimit(at(state, 2_950)), true);
    assert.equal(compressionDue(at(state, 2_400), DEFAULT_LOOP_OPTIONS), true, '0.8 of 2,949');
    assert.equal(compressionDue(at(fresh(), 2_400), DEFAULT_LOOP_OPTIONS), false);
    assert.equal(compressionTarget(state, DEFAULT_LOOP_OPTIONS), Math.floor(0.8 * 2_949 * 0.75));
    assert.equal(remainingBudgets(at(state, 949), 1_000).contextTokens, 2_000);
  });

  test('what the activity found: the reply size always, the window when a server said it', () => {
    const unknown = learnedContextWindow(fresh(), { maxOutputTokens: 2_000 });
    assert.equal(unknown.maxOutputTokens, 2_000);
    assert.equal(unknown.details.contextWindow, undefined);
    assert.deepEqual(withWindow().details.contextWindow, {
      tokens: 4_096,
      source: 'llama-server /props (default_generation_settings.n_ctx)',
      promptBudget: 2_949,
    });
  });

  test('a refusal teaches the window it names (with the reply size learned before); one that names none changes nothing', () => {
    const learned = learnedFromOverflow(
      learnedContextWindow(fresh(), { maxOutputTokens: 500 }),
      "The request did not fit the model's context window: 400 request (4240 tokens) exceeds the available context size (4096 tokens)",
    );
    assert.deepEqual(learned.details.contextWindow, {
      tokens: 4_096,
      source: "the server's context-length error",
      promptBudget: 4_096 - 500 - 123,
    });
    const unchanged = fresh();
    assert.equal(learnedFromOverflow(unchanged, 'Your input exceeds the context window of this model.'), unchanged);
    const known = withWindow();
    assert.equal(
      learnedFromOverflow(known, 'exceeds the available context size (4096 tokens)'),
      known,
      'the same window: kept as learned',
    );
  });
});

describe('the final answer call fits', () => {
  const prepared = (state: RunState) =>
    prepareFinalAnswer(state, 'token_limit', undefined, { protocol: deepResearchProtocol, injected: [] });

  test('askForFinalAnswer is the prepared state and the request (the fitting compresses the first, then adds the second)', () => {
    const state = setPending(withWindow(), [{ role: 'user', parts: [{ text: 'x' }] }], 1, ['call-1-1']);
    const request = finalAnswerRequest('token_limit', deepResearchProtocol, '');
    assert.deepEqual(
      askForFinalAnswer(state, 'token_limit', undefined, {
        protocol: deepResearchProtocol,
        finishReason: '',
        injected: ['hi'],
      }),
      appendPendingText(
        prepareFinalAnswer(state, 'token_limit', undefined, { protocol: deepResearchProtocol, injected: ['hi'] }),
        request,
      ),
    );
    assert.match(request, /You have reached the maximum context length you can handle\./);
  });

  test('the withheld note names the budget in force', () => {
    const state = setPending(withWindow(), [{ role: 'user', parts: [{ text: 'x' }] }], 1, ['call-1-1']);
    assert.match(JSON.stringify(prepared(state).pending), /reached its limit of 2,949 tokens/);
    assert.match(
      JSON.stringify(prepared(setPending(fresh(), [], 0, ['call-1-1'])).pending),
      /reached its limit of 110,000 tokens/,
    );
  });

  test('fits: what the next call sends leaves the answer a sixteenth of the window (compression aims lower, at the budget)', () => {
    assert.equal(finalReplyRoom(4_096, 10_000), 256);
    assert.equal(finalReplyRoom(131_072, 4_000), 4_000, 'never more than the reply reserve');
    assert.equal(finalReplyRoom(256, undefined), 32);
    assert.equal(finalAnswerPromptLimit(withWindow()), 4_096 - 123 - 256);
    assert.equal(
      finalAnswerPromptLimit(withWindow(131_072, fresh(8_000))),
      131_072 - 2_048 - 8_192,
      "maxContextTokens is the loop's budget, not the server's limit",
    );
    assert.equal(finalAnswerPromptLimit(fresh()), undefined, 'unknown window: no limit');
    assert.equal(
      finalAnswerFits(at(fresh(2_000), 5_000)),
      true,
      'unknown window: the call is made as it comes, as before',
    );
    assert.equal(finalAnswerFits(appendPendingText(at(withWindow(), 3_600), 'x'.repeat(400))), true);
    assert.equal(finalAnswerFits(appendPendingText(at(withWindow(), 3_650), 'x'.repeat(400))), false);
    assert.equal(finalAnswerCompressionTarget(withWindow()), 2_949);
    assert.equal(
      finalAnswerCompressionTarget({ ...withWindow(), serverTokensPerEstimatedToken: 1.5 }),
      Math.floor(2_949 / 1.5),
    );
  });

  test('the steps: as the loop compresses, then every turn, then the question alone; one the step before covers is left out', () => {
    assert.deepEqual(finalAnswerFitSteps(DEFAULT_LOOP_OPTIONS), [
      { keepRecentTurns: 3, summarize: true, dropTurns: false },
      { keepRecentTurns: 0, summarize: true, dropTurns: false },
      { keepRecentTurns: 0, summarize: false, dropTurns: true },
    ]);
    assert.deepEqual(finalAnswerFitSteps({ keepRecentTurns: 0, summarizeOldTurns: false }), [
      { keepRecentTurns: 0, summarize: false, dropTurns: false },
      { keepRecentTurns: 0, summarize: false, dropTurns: true },
    ]);
  });

  test('the conversation before compression comes back for the next step; counts made meanwhile stay', () => {
    const before = { ...appendPendingText(at(withWindow(), 100), 'request'), conversation: 'sha256:before' };
    const after = {
      ...before,
      conversation: 'sha256:compressed',
      pending: [],
      pendingTokens: 0,
      contextTokens: 50,
      modelCalls: 7,
    };
    const again = withConversationOf(after, before);
    assert.equal(again.conversation, 'sha256:before');
    assert.deepEqual(again.pending, before.pending);
    assert.equal(again.contextTokens, 100);
    assert.equal(again.modelCalls, 7);
  });

  test('a summary request fits the window too: its reply at most a quarter of it, its prompt the rest less the margin', () => {
    assert.equal(summaryLimits(fresh()), undefined);
    assert.deepEqual(withSummaryLimits(fresh()), {}, 'unknown window: the input is as it always was');
    assert.deepEqual(summaryLimits(withWindow()), { promptTokens: 4_096 - 1_024 - 123, replyTokens: 1_024 });
    assert.deepEqual(summaryLimits({ ...withWindow(32_768), serverTokensPerEstimatedToken: 2 }), {
      promptTokens: Math.floor((32_768 - 1_500 - 984) / 2),
      replyTokens: 1_500,
    });
  });

  test('not even the question fits: no call, and the prediction says why with the numbers', () => {
    const state = finalAnswerDidNotFit(appendPendingText(at(withWindow(), 3_800), 'request'));
    assert.deepEqual(state.details.finalAnswerDidNotFit, { promptTokens: 3_802, promptLimit: 3_717 });
    const prediction = didNotFitPrediction(state.details) ?? '';
    assert.match(prediction, /^No answer: even the question alone does not fit/);
    assert.match(
      prediction,
      /take about 3,802 tokens, and the model's context window of 4,096 tokens leaves at most 3,717 for the prompt \(the rest is kept for the answer\)\.$/,
    );
    const conclusion = concludeRun({ kind: 'budget_ended', budget: 'token_limit' }, DEFAULT_LIMITS, prediction);
    assert.deepEqual(conclusion, { termination: 'token_limit', prediction });
    assert.equal(didNotFitPrediction(fresh().details), undefined);
  });
});

describe('learnContextWindow (the activity, over a fake fetch)', () => {
  type Route = (url: string, init: RequestInit) => { status: number; body?: unknown } | Error;
  function fakeFetch(route: Route) {
    const asked: Array<{ url: string; method: string; authorization: string; body?: string }> = [];
    const fetchImpl = (async (url: string, init: RequestInit) => {
      const headers = init.headers as Record<string, string>;
      asked.push({
        url,
        method: init.method ?? 'GET',
        authorization: headers.authorization ?? '',
        ...(typeof init.body === 'string' ? { body: init.body } : {}),
      });
      const answer = route(url, init);
      if (answer instanceof Error) throw answer;
      return new Response(answer.body === undefined ? 'not found' : JSON.stringify(answer.body), {
        status: answer.status,
      });
    }) as unknown as typeof fetch;
    return { fetchImpl, asked };
  }
  const learn = (route: Route, baseURL = 'http://127.0.0.1:8080/v1', maxOutputTokens?: number) => {
    const { fetchImpl, asked } = fakeFetch(route);
    const chatModel = new OpenAIChatModel({
      client: new OpenAI({ baseURL, apiKey: 'sk-local', maxRetries: 0 }),
      baseUrl: baseURL,
      windowProbe: { fetch: fetchImpl, timeoutMs: 1_000 },
    });
    const activity = createLearnContextWindow({ chatModel, modelDefaults: { maxOutputTokens: 10_000 } });
    return {
      result: activity({ model: 'qwen', ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}) }),
      asked,
    };
  };
  const notFound = { status: 404 };

  test("asks every server family's endpoint at once, with the key, under the server's root", async () => {
    const { result, asked } = learn(() => notFound);
    assert.deepEqual(await result, { maxOutputTokens: 10_000 });
    assert.deepEqual(
      asked.map((request) => `${request.method} ${request.url}`).sort(),
      [
        'GET http://127.0.0.1:8080/v1/models',
        'GET http://127.0.0.1:8080/props',
        'GET http://127.0.0.1:8080/api/ps',
        'POST http://127.0.0.1:8080/api/show',
      ].sort(),
    );
    assert.ok(asked.every((request) => request.authorization === 'Bearer sk-local'));
    assert.equal(asked.find((request) => request.method === 'POST')?.body, JSON.stringify({ model: 'qwen' }));
  });

  test('llama-server', async () => {
    const { result } = learn((url) =>
      url.endsWith('/props')
        ? { status: 200, body: { default_generation_settings: { n_ctx: 4_096 } } }
        : url.endsWith('/models')
          ? { status: 200, body: { data: [{ id: 'qwen' }] } }
          : notFound,
    );
    assert.deepEqual(await result, {
      contextWindow: 4_096,
      source: 'llama-server /props (default_generation_settings.n_ctx)',
      maxOutputTokens: 10_000,
      promptBudget: 2_949,
    });
  });

  test("vLLM, with the run's own max output tokens", async () => {
    const { result } = learn(
      (url) =>
        url.endsWith('/v1/models') ? { status: 200, body: { data: [{ id: 'qwen', max_model_len: 8_192 }] } } : notFound,
      undefined,
      1_000,
    );
    assert.deepEqual(await result, {
      contextWindow: 8_192,
      source: 'vLLM /v1/models (max_model_len)',
      maxOutputTokens: 1_000,
      promptBudget: 8_192 - 1_000 - 246,
    });
  });

  test('Ollama: the loaded model first, else /api/show', async () => {
    const show = { status: 200, body: { parameters: 'num_ctx 16384', model_info: { 'qwen2.context_length': 32_768 } } };
    const loaded = learn(
      (url) =>
        url.endsWith('/api/ps')
          ? { status: 200, body: { models: [{ name: 'qwen:latest', context_length: 8_192 }] } }
          : url.endsWith('/api/show')
            ? show
            : notFound,
      'http://localhost:11434/v1',
    );
    assert.equal((await loaded.result).contextWindow, 8_192);
    const notLoaded = learn(
      (url) =>
        url.endsWith('/api/ps') ? { status: 200, body: { models: [] } } : url.endsWith('/api/show') ? show : notFound,
      'http://localhost:11434/v1',
    );
    assert.equal((await notLoaded.result).contextWindow, 16_384);
  });

  test('a server that answers none of them, answers nonsense, or cannot be reached: unknown, never a failure', async () => {
    assert.deepEqual(await learn(() => ({ status: 200, body: { hello: 'world' } })).result, {
      maxOutputTokens: 10_000,
    });
    assert.deepEqual(await learn(() => new TypeError('fetch failed')).result, { maxOutputTokens: 10_000 });
    assert.deepEqual(
      await learn((url) => (url.endsWith('/props') ? { status: 200, body: '<html>' } : notFound)).result,
      { maxOutputTokens: 10_000 },
    );
  });

  test("the server's root: the base URL without its /v1", () => {
    assert.equal(serverOrigin('http://127.0.0.1:8080/v1'), 'http://127.0.0.1:8080');
    assert.equal(serverOrigin('http://127.0.0.1:8080/v1/'), 'http://127.0.0.1:8080');
    assert.equal(serverOrigin('https://gateway.example/llama/v1'), 'https://gateway.example/llama');
    assert.equal(serverOrigin('https://api.example/openai'), 'https://api.example/openai');
  });

  test("a refusal like the scripted server's (llama-server's body) names its window", () => {
    assert.equal(windowOfOverflowMessage(JSON.stringify(llamaServerContextOverflowBody(5_000, 4_096))), 4_096);
  });
});

describe('what run and follow print', () => {
  test('the window once, at the start, with what a prompt may take of it; or that the server did not say', () => {
    assert.deepEqual(
      progressLines({
        kind: 'context_window_learned',
        output: {
          contextWindow: 4_096,
          source: 'llama-server /props (default_generation_settings.n_ctx)',
          maxOutputTokens: 10_000,
          promptBudget: 2_949,
        },
      }),
      [
        '  model context window: 4,096 tokens (llama-server /props (default_generation_settings.n_ctx)); a prompt may take 2,949 of them',
      ],
    );
    assert.deepEqual(progressLines({ kind: 'context_window_learned', output: { maxOutputTokens: 10_000 } }), [
      '  model context window: the server does not say; the context budget is limits.maxContextTokens',
    ]);
  });
});

describe('summary requests after a refusal', () => {
  test('sized from the window the refusal names: the reply at most a quarter, the prompt a fifth under what is left', () => {
    assert.deepEqual(summaryLimitsAfterRefusal(10_000, 1_500, 1_024), {
      promptTokens: Math.floor((1_024 - 256 - 32) * 0.8),
      replyTokens: 256,
    });
  });

  test('never more than half of what was sent, nor less than two pieces of the minimum; without a window the reply stays', () => {
    assert.deepEqual(summaryLimitsAfterRefusal(1_000, 1_500, undefined), { promptTokens: 500, replyTokens: 1_500 });
    assert.deepEqual(summaryLimitsAfterRefusal(100, 1_500, undefined), {
      promptTokens: MIN_SUMMARY_PIECE_TOKENS * 2,
      replyTokens: 1_500,
    });
    assert.equal(summaryLimitsAfterRefusal(1_000, 1_500, 100_000).promptTokens, 500);
  });
});
