import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { ChatDelta, ChatProgress } from '../../activities/model/chat-model';
import { classifyJudgeError } from '../../activities/model/openai-errors';
import { OpenAIChatModel } from '../../activities/model/openai-chat-model';
import { FailureTypes } from '../../src/core/failure-types';
import { chatModelOver, deltaChunk, fakeOpenAI, stallingStream, streamOf } from '../fakes/fake-chat-completions';

// The OpenAI-compatible ChatModel on its own (no activity, no HTTP): what it sends, how it reads
// a stream into a reply, and how it fails.

const controls = (signal = new AbortController().signal) => {
  const deltas: ChatDelta[] = [];
  const progress: ChatProgress[] = [];
  return {
    signal,
    onDelta: (delta: ChatDelta) => deltas.push(delta),
    onProgress: (beat: ChatProgress) => progress.push(beat),
    deltas,
    progress,
  };
};

const usage = {
  id: 'u',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'fake',
  choices: [],
  usage: {
    prompt_tokens: 120,
    completion_tokens: 30,
    total_tokens: 150,
    prompt_tokens_details: { cached_tokens: 100 },
    completion_tokens_details: { reasoning_tokens: 12 },
  },
};

describe('OpenAIChatModel', () => {
  test("sends the request in the API's shape: stream with usage, stop, tools with their choice, sampling only where set, labels as headers", async () => {
    const { openai, calls } = fakeOpenAI(() => streamOf([deltaChunk({ content: 'ok' }, 'stop')]));
    await chatModelOver(openai).chat(
      {
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stop: ['</tool_call>'],
        tools: [{ name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: {} } }],
        toolChoice: 'none',
        sampling: { temperature: 0.2, maxOutputTokens: 64 },
        labels: { 'workflow-id': 'wf-1', purpose: 'summary' },
      },
      controls(),
    );
    const { params, options } = calls[0] as (typeof calls)[number];
    assert.equal(params.stream, true);
    assert.deepEqual(params.stream_options, { include_usage: true });
    assert.deepEqual(params.stop, ['</tool_call>']);
    assert.equal(params.tool_choice, 'none');
    assert.deepEqual(params.tools, [
      {
        type: 'function',
        function: { name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: {} } },
      },
    ]);
    assert.equal(params.temperature, 0.2);
    assert.equal(params.max_tokens, 64);
    assert.ok(!('top_p' in params) && !('presence_penalty' in params), 'unset sampling is left to the server');
    assert.deepEqual(options.headers, { 'x-react-agent-workflow-id': 'wf-1', 'x-react-agent-purpose': 'summary' });
  });

  test('reads reasoning, content and native tool calls from the stream, reporting each piece and the progress', async () => {
    const { openai } = fakeOpenAI(() =>
      streamOf([
        deltaChunk({ reasoning_content: 'Think ' }),
        deltaChunk({ content: 'Let me look.' }),
        deltaChunk({ tool_calls: [{ index: 0, id: 'call-1', function: { name: 'look', arguments: '{"q":' } }] }),
        deltaChunk({ tool_calls: [{ index: 0, function: { name: 'up', arguments: '"x"}' } }] }, 'tool_calls'),
        usage,
      ]),
    );
    const watch = controls();
    const reply = await chatModelOver(openai).chat({ model: 'm', messages: [{ role: 'user', content: 'q' }] }, watch);
    assert.deepEqual(reply, {
      content: 'Let me look.',
      reasoning: 'Think ',
      toolCalls: [{ id: 'call-1', name: 'lookup', arguments: '{"q":"x"}' }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 120, completionTokens: 30, cachedPromptTokens: 100, reasoningTokens: 12 },
      chunks: 5,
    });
    assert.deepEqual(
      watch.deltas.map((delta) => `${delta.kind}:${delta.text}`),
      [
        'reasoning:Think ',
        'content:Let me look.',
        'tool-name:look',
        'tool-arguments:{"q":',
        'tool-name:up',
        'tool-arguments:"x"}',
      ],
    );
    assert.deepEqual(watch.progress.at(-1), { chunks: 5, contentCharacters: 12, reasoningCharacters: 6 });
  });

  test('a fast stream reports its progress at most every progressIntervalMs, and once more for the last chunk', async () => {
    const pieces = Array.from({ length: 200 }, (_, index) => deltaChunk({ content: `w${index} ` }));
    const stream = () => streamOf([...pieces, deltaChunk({ content: '.' }, 'stop')]);
    const held = controls();
    await chatModelOver(fakeOpenAI(stream).openai).chat({ model: 'm', messages: [] }, held);
    assert.ok(held.progress.length <= 3, `${held.progress.length} progress calls for 201 chunks within a few ms`);
    assert.equal(held.progress.at(-1)?.chunks, 201, 'the last progress counts every chunk');
    assert.equal(held.deltas.length, 201, 'every piece still reaches onDelta at once');

    const everyChunk = { ...controls(), progressIntervalMs: 0 };
    await chatModelOver(fakeOpenAI(stream).openai).chat({ model: 'm', messages: [] }, everyChunk);
    assert.equal(everyChunk.progress.length, 201);
  });

  test('a stream that ends without a finish reason is a retryable bad response', async () => {
    const { openai } = fakeOpenAI(() => streamOf([deltaChunk({ content: 'cut' })]));
    const failure = await chatModelOver(openai)
      .chat({ model: 'm', messages: [] }, controls())
      .catch((error: unknown) => error);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, FailureTypes.modelBadResponse);
    assert.equal(failure.nonRetryable, false);
  });

  test('a stream that stalls past the limit is abandoned as a retryable bad response', async () => {
    const { openai } = fakeOpenAI((call) => stallingStream([deltaChunk({ content: 'a' })], call.options.signal));
    const failure = await chatModelOver(openai)
      .chat({ model: 'm', messages: [] }, { ...controls(), stallLimitMs: 50 })
      .catch((error: unknown) => error);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, FailureTypes.modelBadResponse);
    assert.match(failure.message, /sent nothing for 0.05 s .* after 1 chunks/);
  });

  test('no first chunk within the limit is a first-token timeout', async () => {
    const { openai } = fakeOpenAI((call) => stallingStream([], call.options.signal));
    const failure = await chatModelOver(openai)
      .chat({ model: 'm', messages: [] }, { ...controls(), firstChunkLimitMs: 50 })
      .catch((error: unknown) => error);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, FailureTypes.modelFirstTokenTimeout);
  });

  test('a cancelled call rejects with the abort reason, not a classified failure', async () => {
    const abort = new AbortController();
    const reason = new Error('activity cancelled');
    const { openai } = fakeOpenAI((call) => {
      setTimeout(() => abort.abort(reason), 10);
      return stallingStream([], call.options.signal);
    });
    await assert.rejects(
      chatModelOver(openai).chat({ model: 'm', messages: [] }, controls(abort.signal)),
      (error: unknown) => error === reason,
    );
  });

  test('errors are classified once, by the classifier it was built with (the judge names its own settings)', async () => {
    const { openai } = fakeOpenAI(() => {
      throw new OpenAI.APIConnectionError({ message: 'Connection error.' });
    });
    const asModel = await chatModelOver(openai, 'http://model.test/v1')
      .chat({ model: 'm', messages: [] }, controls())
      .catch((error: unknown) => error);
    assert.ok(asModel instanceof ApplicationFailure);
    assert.equal(asModel.type, FailureTypes.modelUnreachable);
    assert.match(asModel.message, /OPENAI_BASE_URL/);
    const judge = new OpenAIChatModel({
      client: openai,
      baseUrl: 'http://judge.test/v1',
      classifyError: classifyJudgeError,
    });
    const asJudge = await judge.chat({ model: 'j', messages: [] }, controls()).catch((error: unknown) => error);
    assert.ok(asJudge instanceof ApplicationFailure);
    assert.equal(asJudge.type, 'ReactAgent.Judge.Unreachable');
    assert.match(asJudge.message, /REACT_AGENT_JUDGE_BASE_URL/);
  });
});
