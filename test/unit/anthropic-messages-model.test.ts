import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { classifyAnthropicJudgeError } from '../../activities/model/anthropic-errors';
import { AnthropicMessagesModel } from '../../activities/model/anthropic-messages-model';
import { boundedEventStreamFetch } from '../../activities/model/bounded-event-stream';
import type { ChatControls, ChatDelta, ChatRequest } from '../../activities/model/chat-model';
import { EvaluationFailureTypes } from '../../src/core/evaluation/evaluation-contract';
import { FailureTypes } from '../../src/core/failure-types';
import type { ChatMessage } from '../../src/core/messages';
import { modelCallCostUsd } from '../../src/domain/model-prices';
import { anthropicStream, scriptedFetch, sseEvent, type ScriptedAnswer } from '../fakes/model-api-streams';

// Anthropic's Messages API (issue 31) over the real @anthropic-ai/sdk client, its fetch a script:
// the request's mapping (system, tool results, thinking blocks sent back, cache breakpoints),
// the reply's reading (text, thinking, tool_use, usage with cache reads and writes, max_tokens),
// and the classification of its errors.

const KEY = 'sk-ant-test-secret';

function modelAnswering(
  answers: ScriptedAnswer[],
  options: { thinkingBudgetTokens?: number } = {},
  maxLineBytes = 1024 * 1024,
) {
  const scripted = scriptedFetch(answers);
  const client = new Anthropic({
    baseURL: 'http://anthropic.test',
    apiKey: KEY,
    maxRetries: 0,
    openTelemetry: false,
    fetch: boundedEventStreamFetch({ maxLineBytes, maxStreamBytes: 64 * maxLineBytes }, scripted.fetch),
  });
  return { model: new AnthropicMessagesModel({ client, baseUrl: 'http://anthropic.test', ...options }), ...scripted };
}

const controls = (deltas: ChatDelta[] = []): ChatControls => ({
  signal: new AbortController().signal,
  onDelta: (delta) => deltas.push(delta),
});

const TOOLS = [
  {
    name: 'search',
    description: 'Searches the web.',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
  },
];

const request = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'claude-test',
  messages,
  tools: TOOLS,
  sampling: { temperature: 0.6, topP: 0.95, maxOutputTokens: 2000 },
  labels: { 'workflow-id': 'run-1' },
  ...extra,
});

describe('AnthropicMessagesModel', () => {
  test('a tool call with thinking, then the answer: thinking blocks and signatures sent back, cache breakpoints on tools, system and the last block', async () => {
    const { model, requests } = modelAnswering([
      anthropicStream({
        thinking: { text: 'I should search.', signature: 'sig-abc' },
        text: 'Searching.',
        toolUses: [{ id: 'toolu_1', name: 'search', input: { q: 'temporal' } }],
        usage: { input: 20, output: 30, cacheWrite: 1000 },
      }),
      anthropicStream({ text: 'The answer.', usage: { input: 15, output: 10, cacheRead: 1000, cacheWrite: 40 } }),
    ]);
    const deltas: ChatDelta[] = [];
    const conversation: ChatMessage[] = [
      { role: 'system', content: 'You are a researcher.' },
      { role: 'user', content: 'What is Temporal?' },
    ];
    const first = await model.chat(request(conversation), controls(deltas));
    assert.equal(first.content, 'Searching.');
    assert.equal(first.reasoning, 'I should search.');
    assert.deepEqual(first.toolCalls, [{ id: 'toolu_1', name: 'search', arguments: '{"q":"temporal"}' }]);
    assert.equal(first.finishReason, 'tool_calls');
    assert.deepEqual(first.usage, {
      promptTokens: 1020,
      completionTokens: 30,
      cachedPromptTokens: 0,
      cacheWriteTokens: 1000,
    });
    assert.deepEqual(first.provider, {
      api: 'anthropic-messages',
      items: [{ type: 'thinking', thinking: 'I should search.', signature: 'sig-abc' }],
    });
    assert.deepEqual(
      [...new Set(deltas.map((delta) => delta.kind))],
      ['reasoning', 'content', 'tool-name', 'tool-arguments'],
    );

    const sent = requests[0]!;
    assert.equal(sent.url, 'http://anthropic.test/v1/messages');
    // The SDK sends the key its own way (1.17: a bearer token; earlier: x-api-key).
    assert.match(`${sent.headers.get('authorization')} ${sent.headers.get('x-api-key')}`, new RegExp(KEY));
    assert.equal(sent.headers.get('x-react-agent-workflow-id'), 'run-1');
    assert.equal(sent.body.stream, true);
    assert.equal(sent.body.max_tokens, 2000);
    assert.equal(sent.body.temperature, 0.6);
    assert.equal(sent.body.top_p, undefined, 'one of temperature and top_p');
    assert.deepEqual(sent.body.system, [
      { type: 'text', text: 'You are a researcher.', cache_control: { type: 'ephemeral' } },
    ]);
    assert.deepEqual(sent.body.tools, [
      {
        ...{ name: 'search', description: 'Searches the web.', input_schema: TOOLS[0]!.parameters },
        cache_control: { type: 'ephemeral' },
      },
    ]);
    assert.deepEqual(sent.body.tool_choice, { type: 'auto' });
    assert.deepEqual(sent.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'What is Temporal?', cache_control: { type: 'ephemeral' } }] },
    ]);

    // The assistant message as the model activity stores it, then the tool's answer.
    const assistant: ChatMessage = {
      role: 'assistant',
      content: first.content,
      reasoning: first.reasoning,
      toolCalls: first.toolCalls,
      ...(first.provider ? { provider: first.provider } : {}),
    };
    const second = await model.chat(
      request([
        ...conversation,
        assistant,
        { role: 'tool', toolCallId: 'toolu_1', content: 'A durable execution platform.' },
      ]),
      controls(),
    );
    assert.equal(second.content, 'The answer.');
    assert.equal(second.finishReason, 'stop');
    assert.equal(second.provider, undefined);
    assert.deepEqual(second.usage, {
      promptTokens: 1055,
      completionTokens: 10,
      cachedPromptTokens: 1000,
      cacheWriteTokens: 40,
    });
    assert.deepEqual((requests[1]!.body.messages as unknown[]).slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should search.', signature: 'sig-abc' },
          { type: 'text', text: 'Searching.' },
          { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'temporal' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: 'A durable execution platform.',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);
    // Cache reads at a tenth, writes at 1.25 × input.
    const price = { 'claude-test': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } };
    assert.ok(
      Math.abs(
        modelCallCostUsd(price, 'claude-test', second.usage!)! - (15 * 3 + 1000 * 0.3 + 40 * 3.75 + 10 * 15) / 1e6,
      ) < 1e-12,
    );
  });

  test('thinking enabled: the budget sent, temperature and top_p left out; no tools, no tool_choice; stop sequences', async () => {
    const { model, requests } = modelAnswering([anthropicStream({ text: 'ok' })], { thinkingBudgetTokens: 1024 });
    await model.chat(request([{ role: 'user', content: 'hi' }], { tools: [], stop: ['</answer>'] }), controls());
    const body = requests[0]!.body;
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(body.temperature, undefined);
    assert.equal(body.top_p, undefined);
    assert.equal(body.tools, undefined);
    assert.equal(body.tool_choice, undefined);
    assert.deepEqual(body.stop_sequences, ['</answer>']);
  });

  test('the final-answer call forbids tools; consecutive tool results are one user turn, before the next user text', async () => {
    const { model, requests } = modelAnswering([anthropicStream({ text: 'done' })]);
    await model.chat(
      request(
        [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'a', name: 'search', arguments: '{"q":1}' },
              { id: 'b', name: 'search', arguments: 'not json' },
            ],
          },
          { role: 'tool', toolCallId: 'a', content: 'one' },
          { role: 'tool', toolCallId: 'b', content: 'two' },
          { role: 'user', content: 'Answer now.' },
        ],
        { toolChoice: 'none' },
      ),
      controls(),
    );
    const body = requests[0]!.body;
    assert.deepEqual(body.tool_choice, { type: 'none' });
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    assert.deepEqual(
      messages.map((message) => [message.role, message.content.map((block) => block.type)]),
      [
        ['user', ['text']],
        ['assistant', ['tool_use', 'tool_use']],
        ['user', ['tool_result', 'tool_result', 'text']],
      ],
    );
    assert.deepEqual(messages[1]!.content[1]!.input, {}, 'arguments that are not a JSON object go as {}');
  });

  test('max_tokens is finish reason length, as Chat Completions says it', async () => {
    const { model } = modelAnswering([anthropicStream({ text: 'cut of', stopReason: 'max_tokens' })]);
    const reply = await model.chat(request([{ role: 'user', content: 'q' }]), controls());
    assert.equal(reply.finishReason, 'length');
  });

  const failureOf = async (answer: ScriptedAnswer): Promise<ApplicationFailure> => {
    const { model } = modelAnswering([answer]);
    const error = await model.chat(request([{ role: 'user', content: 'q' }]), controls()).then(
      () => assert.fail('expected a failure'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ApplicationFailure, String(error));
    return error;
  };
  const errorBody = (type: string, message: string) => ({ type: 'error', error: { type, message } });

  test('errors: overloaded and rate limits retried after retry-after, auth not retried, "prompt is too long" the context overflow', async () => {
    const overloaded = await failureOf({
      status: 529,
      body: errorBody('overloaded_error', 'Overloaded'),
      headers: { 'retry-after': '7' },
    });
    assert.equal(overloaded.type, FailureTypes.modelServerError);
    assert.equal(overloaded.nonRetryable, false);
    assert.equal(overloaded.nextRetryDelay, 7000);
    assert.match(overloaded.message, /529 overloaded_error/);

    const limited = await failureOf({
      status: 429,
      body: errorBody('rate_limit_error', 'Number of requests has exceeded your rate limit'),
      headers: { 'retry-after': '3' },
    });
    assert.equal(limited.type, FailureTypes.modelRateLimited);
    assert.equal(limited.nextRetryDelay, 3000);

    const auth = await failureOf({ status: 401, body: errorBody('authentication_error', `invalid x-api-key ${KEY}`) });
    assert.equal(auth.type, FailureTypes.modelRequestRejected);
    assert.equal(auth.nonRetryable, true);
    assert.match(auth.message, /ANTHROPIC_API_KEY/);
    assert.doesNotMatch(auth.message, new RegExp(KEY), 'an echoed key is redacted');

    const overflow = await failureOf({
      status: 400,
      body: errorBody('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    });
    assert.equal(overflow.type, FailureTypes.modelContextLengthExceeded);
    assert.equal(overflow.nonRetryable, true);

    const missing = await failureOf({ status: 404, body: errorBody('not_found_error', 'model: claude-nope') });
    assert.equal(missing.type, FailureTypes.modelRequestRejected);
    assert.match(missing.message, /REACT_AGENT_MODEL/);
  });

  test('an error event in the middle of the stream is classified by its type (overloaded: retried)', async () => {
    const failure = await failureOf(
      anthropicStream({ text: 'partial' }).split('event: message_delta')[0]! +
        sseEvent({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    assert.equal(failure.type, FailureTypes.modelServerError);
    assert.equal(failure.nonRetryable, false);
  });

  test('a stream that ends without a stop reason is a bad response, retried', async () => {
    const failure = await failureOf(anthropicStream({ text: 'partial' }).split('event: message_delta')[0]!);
    assert.equal(failure.type, FailureTypes.modelBadResponse);
  });

  test('a line past REACT_AGENT_MODEL_MAX_LINE_BYTES is ReplyTooLarge, not retried (the bounded fetch)', async () => {
    const { model } = modelAnswering([anthropicStream({ text: 'x'.repeat(10_000) })], {}, 2_048);
    const error = await model.chat(request([{ role: 'user', content: 'q' }]), controls()).then(
      () => assert.fail('expected a failure'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ApplicationFailure);
    assert.equal(error.type, FailureTypes.modelReplyTooLarge);
    assert.equal(error.nonRetryable, true);
  });

  test('the judge: rate limits and overload retried, a refused key not', () => {
    const endpoint = { baseUrl: 'http://anthropic.test', model: 'claude-test' };
    const apiError = (status: number, type: string) =>
      Anthropic.APIError.generate(status, { type: 'error', error: { type, message: type } }, undefined, new Headers());
    assert.equal(
      classifyAnthropicJudgeError(apiError(429, 'rate_limit_error'), endpoint).type,
      EvaluationFailureTypes.judgeRateLimited,
    );
    assert.equal(
      classifyAnthropicJudgeError(apiError(529, 'overloaded_error'), endpoint).type,
      EvaluationFailureTypes.judgeServerError,
    );
    const refused = classifyAnthropicJudgeError(apiError(401, 'authentication_error'), endpoint);
    assert.equal(refused.type, EvaluationFailureTypes.judgeRejected);
    assert.equal(refused.nonRetryable, true);
    assert.match(refused.message, /REACT_AGENT_JUDGE_API_KEY/);
  });

  test('the context window from the Models API (max_input_tokens)', async () => {
    const { model, requests } = modelAnswering([
      { status: 200, body: { id: 'claude-test', type: 'model', max_input_tokens: 200000, max_tokens: 64000 } },
    ]);
    assert.deepEqual(await model.contextWindow('claude-test'), {
      tokens: 200000,
      source: 'Anthropic /v1/models (max_input_tokens)',
    });
    assert.equal(requests[0]!.url, 'http://anthropic.test/v1/models/claude-test');
  });

  test('cancellation aborts the request with the signal’s reason', async () => {
    const abort = new AbortController();
    const scripted = scriptedFetch([]);
    const client = new Anthropic({
      baseURL: 'http://anthropic.test',
      apiKey: KEY,
      maxRetries: 0,
      openTelemetry: false,
      fetch: (async (_input: unknown, init?: RequestInit) =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(
                new TextEncoder().encode(anthropicStream({ text: 'x' }).split('event: content_block_delta')[0]),
              );
              init?.signal?.addEventListener('abort', () => controller.error(init.signal?.reason));
            },
          }),
          { status: 200, headers: { 'content-type': 'text/event-stream' } },
        )) as typeof fetch,
    });
    void scripted;
    const model = new AnthropicMessagesModel({ client, baseUrl: 'http://anthropic.test' });
    const reason = new Error('cancelled by the test');
    const pending = model.chat(request([{ role: 'user', content: 'q' }]), {
      signal: abort.signal,
      onProgress: () => abort.abort(reason),
    });
    await assert.rejects(pending, (error) => error === reason);
  });
});
