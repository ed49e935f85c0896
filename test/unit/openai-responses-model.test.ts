import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { boundedEventStreamFetch } from '../../activities/model/bounded-event-stream';
import type { ChatRequest } from '../../activities/model/chat-model';
import { OpenAIResponsesModel } from '../../activities/model/openai-responses-model';
import { FailureTypes } from '../../src/core/failure-types';
import type { ChatMessage } from '../../src/core/messages';
import { responsesStream, scriptedFetch, sseEvent, type ScriptedAnswer } from '../fakes/model-api-streams';

// OpenAI's Responses API (issue 31) over the real openai client, its fetch a script: stateless
// requests (store: false, encrypted reasoning included), reasoning items carried to the next
// call, function_call / function_call_output, usage with cached tokens, incomplete as length.

function modelAnswering(answers: ScriptedAnswer[], reasoningEffort?: string) {
  const scripted = scriptedFetch(answers);
  const client = new OpenAI({
    baseURL: 'http://openai.test/v1',
    apiKey: 'sk-test',
    maxRetries: 0,
    fetch: boundedEventStreamFetch({ maxLineBytes: 1024 * 1024, maxStreamBytes: 64 * 1024 * 1024 }, scripted.fetch),
  });
  return {
    model: new OpenAIResponsesModel({
      client,
      baseUrl: 'http://openai.test/v1',
      ...(reasoningEffort ? { reasoningEffort } : {}),
    }),
    ...scripted,
  };
}

const controls = () => ({ signal: new AbortController().signal });
const TOOLS = [{ name: 'search', description: 'Searches.', parameters: { type: 'object', properties: {} } }];
const request = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gpt-test',
  messages,
  tools: TOOLS,
  sampling: { temperature: 0.6, topP: 0.95, maxOutputTokens: 2000 },
  ...extra,
});

describe('OpenAIResponsesModel', () => {
  test('a function call with reasoning, then the answer: the reasoning item goes back with its encrypted content', async () => {
    const { model, requests } = modelAnswering(
      [
        responsesStream({
          reasoning: { id: 'rs_1', summary: 'Need to search.', encrypted: 'gAAAA-opaque' },
          functionCalls: [{ callId: 'call_1', name: 'search', arguments: '{"q":"temporal"}' }],
          usage: { input: 100, output: 40, cached: 0, reasoning: 30 },
        }),
        responsesStream({ text: 'The answer.', usage: { input: 160, output: 5, cached: 100 } }),
      ],
      'high',
    );
    const conversation: ChatMessage[] = [
      { role: 'system', content: 'Research.' },
      { role: 'user', content: 'What is Temporal?' },
    ];
    const first = await model.chat(request(conversation), controls());
    assert.equal(first.reasoning, 'Need to search.');
    assert.deepEqual(first.toolCalls, [{ id: 'call_1', name: 'search', arguments: '{"q":"temporal"}' }]);
    assert.equal(first.finishReason, 'tool_calls');
    assert.deepEqual(first.usage, {
      promptTokens: 100,
      completionTokens: 40,
      cachedPromptTokens: 0,
      reasoningTokens: 30,
    });
    const reasoningItem = {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'Need to search.' }],
      encrypted_content: 'gAAAA-opaque',
    };
    assert.deepEqual(first.provider, { api: 'openai-responses', items: [reasoningItem] });
    const body = requests[0]!.body;
    assert.equal(requests[0]!.url, 'http://openai.test/v1/responses');
    assert.equal(body.store, false);
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    assert.deepEqual(body.reasoning, { effort: 'high', summary: 'auto' });
    assert.equal(body.temperature, undefined, 'a reasoning model takes no sampling settings');
    assert.equal(body.max_output_tokens, 2000);
    assert.deepEqual(body.tools, [
      { type: 'function', name: 'search', description: 'Searches.', parameters: TOOLS[0]!.parameters, strict: false },
    ]);
    assert.deepEqual(body.input, [
      { role: 'system', content: 'Research.' },
      { role: 'user', content: 'What is Temporal?' },
    ]);

    const assistant: ChatMessage = {
      role: 'assistant',
      content: '',
      toolCalls: first.toolCalls,
      ...(first.provider ? { provider: first.provider } : {}),
    };
    const second = await model.chat(
      request([...conversation, assistant, { role: 'tool', toolCallId: 'call_1', content: 'A platform.' }]),
      controls(),
    );
    assert.equal(second.content, 'The answer.');
    assert.equal(second.finishReason, 'stop');
    assert.equal(second.usage?.cachedPromptTokens, 100);
    assert.deepEqual((requests[1]!.body.input as unknown[]).slice(2), [
      reasoningItem,
      { type: 'function_call', call_id: 'call_1', name: 'search', arguments: '{"q":"temporal"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'A platform.' },
    ]);
  });

  test('sampling without a reasoning effort; tool_choice none on the final call; incomplete is length', async () => {
    const { model, requests } = modelAnswering([responsesStream({ text: 'cut', status: 'incomplete' })]);
    const reply = await model.chat(
      request(
        [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '<tool_call>…</tool_call>' },
          { role: 'user', content: 'Answer now.' },
        ],
        { toolChoice: 'none' },
      ),
      controls(),
    );
    // An assistant message with its type spelled out (llama-server refuses one without).
    assert.deepEqual((requests[0]!.body.input as unknown[])[1], {
      type: 'message',
      role: 'assistant',
      content: '<tool_call>…</tool_call>',
    });
    assert.equal(reply.finishReason, 'length');
    assert.equal(requests[0]!.body.temperature, 0.6);
    assert.equal(requests[0]!.body.top_p, 0.95);
    assert.equal(requests[0]!.body.tool_choice, 'none');
  });

  test('a response that says completed but used the whole output limit was cut: length (llama-server says completed)', async () => {
    const { model } = modelAnswering([responsesStream({ text: 'cut', usage: { input: 10, output: 2000 } })]);
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

  test('errors: HTTP ones as Chat Completions classifies them, a failed response by its code', async () => {
    const limited = await failureOf({
      status: 429,
      body: { error: { message: 'Rate limit', type: 'requests', code: 'rate_limit_exceeded' } },
      headers: { 'retry-after': '2' },
    });
    assert.equal(limited.type, FailureTypes.modelRateLimited);
    assert.equal(limited.nextRetryDelay, 2000);
    const overflow = await failureOf({
      status: 400,
      body: {
        error: { message: 'Your input exceeds the context window of this model.', code: 'context_length_exceeded' },
      },
    });
    assert.equal(overflow.type, FailureTypes.modelContextLengthExceeded);
    const failed = await failureOf(
      sseEvent({
        type: 'response.created',
        sequence_number: 0,
        response: { id: 'r', status: 'in_progress', output: [] },
      }) +
        sseEvent({
          type: 'response.failed',
          sequence_number: 1,
          response: { id: 'r', status: 'failed', output: [], error: { code: 'server_error', message: 'boom' } },
        }),
    );
    assert.equal(failed.type, FailureTypes.modelServerError);
    assert.equal(failed.nonRetryable, false);
  });
});
