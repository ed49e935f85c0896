import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  MODEL_CALL_HEADER,
  ScriptedModelServer,
  WORKFLOW_ID_HEADER,
  countAssistantMessages,
  scriptFromTurns,
  type Script,
} from '../fakes/scripted-model-server';

async function withServer(script: Script, body: (server: ScriptedModelServer, client: OpenAI) => Promise<void>): Promise<void> {
  const server = await ScriptedModelServer.start({ script });
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test-key', maxRetries: 0, timeout: 5_000 });
  try {
    await body(server, client);
  } finally {
    await server.close();
  }
}

const longContent = 'The quick brown fox jumps over the lazy dog. '.repeat(5);

test('streaming content is assembled from several chunks and usage is reported with include_usage', async () => {
  await withServer(
    () => ({ content: longContent }),
    async (server, client) => {
      const stream = await client.chat.completions.create({
        model: 'scripted-model',
        messages: [{ role: 'user', content: 'abcdefgh' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let content = '';
      let contentChunks = 0;
      let finishReason: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined | null;
      let role: string | undefined;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (choice?.delta.role) role = choice.delta.role;
        if (choice?.delta.content) {
          content += choice.delta.content;
          contentChunks += 1;
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) {
          assert.equal(chunk.choices.length, 0);
          usage = chunk.usage;
        }
      }
      assert.equal(role, 'assistant');
      assert.equal(content, longContent);
      assert.equal(contentChunks, Math.ceil(longContent.length / 20));
      assert.equal(finishReason, 'stop');
      assert.deepEqual(usage, { prompt_tokens: 2, completion_tokens: Math.ceil(longContent.length / 4), total_tokens: 2 + Math.ceil(longContent.length / 4) });
      const record = await server.waitForRequest((candidate) => candidate.completed, 1_000);
      assert.equal(record.sequence, 1);
      assert.equal(record.status, 200);
      assert.equal(record.aborted, false);
      assert.equal(record.authorization, 'Bearer test-key');
      assert.equal(record.body.stream, true);
    },
  );
});

test('streaming without include_usage sends no usage chunk; explicit chunk count is honoured', async () => {
  await withServer(
    () => ({ content: 'abcdef', chunks: 3, promptTokens: 7, completionTokens: 9 }),
    async (_server, client) => {
      const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const pieces: string[] = [];
      for await (const chunk of stream) {
        assert.ok(!chunk.usage);
        const piece = chunk.choices[0]?.delta.content;
        if (piece) pieces.push(piece);
      }
      assert.deepEqual(pieces, ['ab', 'cd', 'ef']);
    },
  );
});

test('non-streaming completion carries content, usage and tool calls', async () => {
  await withServer(
    () => ({ content: 'hello there', promptTokens: 11, completionTokens: 3 }),
    async (_server, client) => {
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.choices[0]?.message.content, 'hello there');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.deepEqual({ ...completion.usage }, { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    },
  );
  await withServer(
    () => ({ toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query":"x"}' }] }),
    async (_server, client) => {
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const message = completion.choices[0]?.message;
      assert.equal(message?.content, null);
      assert.deepEqual(message?.tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"query":"x"}' } }]);
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
    },
  );
});

test('streamed tool call deltas reassemble into the scripted calls', async () => {
  const toolCalls = [
    { id: 'call_a', name: 'search', arguments: '{"query":"temporal durable execution"}' },
    { id: 'call_b', name: 'visit', arguments: '{"url":"https://example.com"}' },
  ];
  await withServer(
    () => ({ content: 'Let me look.', toolCalls }),
    async (_server, client) => {
      const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const assembled: Array<{ id: string; name: string; arguments: string }> = [];
      let content = '';
      let finishReason: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        content += choice?.delta.content ?? '';
        for (const delta of choice?.delta.tool_calls ?? []) {
          const call = (assembled[delta.index] ??= { id: '', name: '', arguments: '' });
          if (delta.id) call.id = delta.id;
          if (delta.function?.name) call.name += delta.function.name;
          if (delta.function?.arguments) call.arguments += delta.function.arguments;
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
      }
      assert.equal(content, 'Let me look.');
      assert.deepEqual(assembled, toolCalls);
      assert.equal(finishReason, 'tool_calls');
    },
  );
});

test('stop sequences cut the content at the first occurrence, stop string excluded', async () => {
  const scripted = 'Thinking.\n<code>search("x")</code>\n<tool_response>\nfake result\n</tool_response>';
  await withServer(
    () => ({ content: scripted, chunks: 5 }),
    async (_server, client) => {
      const stop = ['\n<tool_response>', '<tool_response>'];
      const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stop });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      assert.equal(content, 'Thinking.\n<code>search("x")</code>');
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stop: 'search' });
      assert.equal(completion.choices[0]?.message.content, 'Thinking.\n<code>');
    },
  );
});

test('429 with retry-after reaches the client as an APIError with the header', async () => {
  await withServer(
    () => ({ status: 429, errorMessage: 'Slow down', errorCode: 'rate_limit_exceeded', headers: { 'retry-after': '2' } }),
    async (server, client) => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true })
        .then(() => undefined, (caught: unknown) => caught);
      assert.ok(error instanceof OpenAI.APIError, `expected APIError, got ${String(error)}`);
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.status, 429);
      assert.equal(error.headers?.get('retry-after'), '2');
      assert.equal(error.code, 'rate_limit_exceeded');
      assert.match(error.message, /Slow down/);
      const record = await server.waitForRequest((candidate) => candidate.completed, 1_000);
      assert.equal(record.status, 429);
    },
  );
});

test('a context-length 400 has code context_length_exceeded', async () => {
  await withServer(
    () => ({ status: 400, errorCode: 'context_length_exceeded', errorMessage: "This model's maximum context length is 8192 tokens." }),
    async (_server, client) => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
        .then(() => undefined, (caught: unknown) => caught);
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'context_length_exceeded');
      assert.equal(error.type, 'invalid_request_error');
    },
  );
});

test('a stalled stream can be aborted by the client; the record shows aborted, not completed', async () => {
  await withServer(
    () => ({ content: longContent, stallAfterChunks: 2 }),
    async (server, client) => {
      const abort = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
        { signal: abort.signal },
      );
      let received = 0;
      for await (const _chunk of stream) {
        received += 1;
        if (received === 2) setTimeout(() => abort.abort(), 50);
      }
      // The openai client ends the iteration quietly when its signal aborts.
      assert.equal(abort.signal.aborted, true);
      assert.equal(received, 2);
      const record = await server.waitForRequest((candidate) => candidate.aborted, 2_000);
      assert.equal(record.completed, false);
      assert.equal(record.aborted, true);
    },
  );
});

test('workflow id and model call headers are recorded; waitForRequest waits for future requests', async () => {
  await withServer(
    scriptFromTurns([{ content: 'first' }, { content: 'second' }]),
    async (server, client) => {
      const waiting = server.waitForRequest((record) => record.modelCall === 2, 2_000);
      const first = await client.chat.completions.create(
        { model: 'm', messages: [{ role: 'user', content: 'q' }] },
        { headers: { [WORKFLOW_ID_HEADER]: 'run-42', [MODEL_CALL_HEADER]: '1' } },
      );
      assert.equal(first.choices[0]?.message.content, 'first');
      const second = await client.chat.completions.create(
        {
          model: 'm',
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'first' },
            { role: 'user', content: 'more' },
          ],
        },
        { headers: { [WORKFLOW_ID_HEADER]: 'run-42', [MODEL_CALL_HEADER]: '2' } },
      );
      assert.equal(second.choices[0]?.message.content, 'second');
      const record = await waiting;
      assert.equal(record.sequence, 2);
      assert.equal(record.workflowId, 'run-42');
      assert.equal(countAssistantMessages(record.messages), 1);
      assert.equal(server.requests[0]?.modelCall, 1);
      await assert.rejects(server.waitForRequest((candidate) => candidate.modelCall === 99, 30), /No matching request/);
    },
  );
});

test('scriptFromTurns repeats the last turn; setScript swaps the script; function form gets a 1-based model call', async () => {
  await withServer(
    scriptFromTurns([{ content: 'only' }]),
    async (server, client) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'assistant', content: 'b' },
      ];
      assert.equal((await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content, 'only');
      server.setScript(scriptFromTurns((modelCall, request) => ({ content: `call ${modelCall} seq ${request.sequence}` })));
      assert.equal((await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content, 'call 3 seq 2');
    },
  );
});

test('models list, 404 and invalid JSON', async () => {
  await withServer(
    () => ({ content: 'x' }),
    async (server, client) => {
      const models = await client.models.list();
      // The openai client parses with Node's fetch, whose objects live outside jest's sandbox realm: compare copies.
      assert.deepEqual([...models.data.map((model) => model.id)], ['scripted-model']);
      const notFound = await fetch(`${server.baseUrl}/embeddings`, { method: 'POST', body: '{}' });
      assert.equal(notFound.status, 404);
      assert.ok(((await notFound.json()) as { error?: unknown }).error);
      const invalid = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: '{not json', headers: { 'content-type': 'application/json' } });
      assert.equal(invalid.status, 400);
      assert.equal(server.requests.length, 0);
    },
  );
});

test('a delayed reply and a throwing script', async () => {
  await withServer(
    () => ({ content: 'late', delayBeforeFirstChunkMs: 100 }),
    async (server, client) => {
      const started = Date.now();
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(completion.choices[0]?.message.content, 'late');
      assert.ok(Date.now() - started >= 90);
      server.setScript(() => {
        throw new Error('script broke');
      });
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
        .then(() => undefined, (caught: unknown) => caught);
      assert.ok(error instanceof OpenAI.InternalServerError);
      assert.match(error.message, /script broke/);
    },
  );
});

test('close() returns promptly while a stalled stream is open', async () => {
  const server = await ScriptedModelServer.start({ script: () => ({ content: longContent, stallAfterChunks: 1 }) });
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test-key', maxRetries: 0, timeout: 5_000 });
  const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const consumed = (async () => {
    for await (const _chunk of stream) {
      // keep reading until the server goes away
    }
  })().then(() => undefined, (caught: unknown) => caught);
  await server.waitForRequest(() => true, 1_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = Date.now();
  await server.close();
  assert.ok(Date.now() - started < 1_000, `close() took ${Date.now() - started} ms`);
  await consumed;
  const record = server.requests[0];
  assert.equal(record?.completed, false);
  assert.equal(record?.aborted, true);
  await server.close();
});
