// Runs alone: asserts close() takes under 1 s and stream delays in tens of milliseconds
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
import { llamaServerContextOverflowBody } from '../fakes/model-server-error-bodies';

async function withServer(
  script: Script,
  body: (server: ScriptedModelServer, client: OpenAI) => Promise<void>,
): Promise<void> {
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
      assert.deepEqual(usage, {
        prompt_tokens: 2,
        completion_tokens: Math.ceil(longContent.length / 4),
        total_tokens: 2 + Math.ceil(longContent.length / 4),
      });
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
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
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
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.choices[0]?.message.content, 'hello there');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.deepEqual({ ...completion.usage }, { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    },
  );
  await withServer(
    () => ({ toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query":"x"}' }] }),
    async (_server, client) => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      });
      const message = completion.choices[0]?.message;
      assert.equal(message?.content, null);
      // Parsed by Node's fetch, outside jest's sandbox realm: compare a copy.
      assert.deepEqual(JSON.parse(JSON.stringify(message?.tool_calls)), [
        { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"query":"x"}' } },
      ]);
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
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
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
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stop,
      });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      assert.equal(content, 'Thinking.\n<code>search("x")</code>');
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stop: 'search',
      });
      assert.equal(completion.choices[0]?.message.content, 'Thinking.\n<code>');
    },
  );
});

test('429 with retry-after reaches the client as an APIError with the header', async () => {
  await withServer(
    () => ({
      status: 429,
      errorMessage: 'Slow down',
      errorCode: 'rate_limit_exceeded',
      headers: { 'retry-after': '2' },
    }),
    async (server, client) => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
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
    () => ({
      status: 400,
      errorCode: 'context_length_exceeded',
      errorMessage: "This model's maximum context length is 8192 tokens.",
    }),
    async (_server, client) => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
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
  await withServer(scriptFromTurns([{ content: 'first' }, { content: 'second' }]), async (server, client) => {
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
    await assert.rejects(
      server.waitForRequest((candidate) => candidate.modelCall === 99, 30),
      /No matching request/,
    );
  });
});

test('scriptFromTurns repeats the last turn; setScript swaps the script; function form gets a 1-based model call', async () => {
  await withServer(scriptFromTurns([{ content: 'only' }]), async (server, client) => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
    ];
    assert.equal((await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content, 'only');
    server.setScript(
      scriptFromTurns((modelCall, request) => ({ content: `call ${modelCall} seq ${request.sequence}` })),
    );
    assert.equal(
      (await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content,
      'call 3 seq 2',
    );
  });
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
      const invalid = await fetch(`${server.baseUrl}/chat/completions`, {
        method: 'POST',
        body: '{not json',
        headers: { 'content-type': 'application/json' },
      });
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
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(completion.choices[0]?.message.content, 'late');
      assert.ok(Date.now() - started >= 90);
      server.setScript(() => {
        throw new Error('script broke');
      });
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof OpenAI.InternalServerError);
      assert.match(error.message, /script broke/);
    },
  );
});

test('close() returns promptly while a stalled stream is open', async () => {
  const server = await ScriptedModelServer.start({ script: () => ({ content: longContent, stallAfterChunks: 1 }) });
  const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test-key', maxRetries: 0, timeout: 5_000 });
  const stream = await client.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  const consumed = (async () => {
    for await (const _chunk of stream) {
      // keep reading until the server goes away
    }
  })().then(
    () => undefined,
    (caught: unknown) => caught,
  );
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

/** The raw SSE text of a streamed reply, for shapes the openai client hides (pings, nulls). */
async function rawStream(
  server: ScriptedModelServer,
  body: Record<string, unknown> = {},
): Promise<{ text: string; events: string[]; firstDataAfterMs: number }> {
  const started = Date.now();
  const response = await fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      ...body,
    }),
  });
  let text = '';
  let firstDataAfterMs = -1;
  const decoder = new TextDecoder();
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(part, { stream: true });
    if (firstDataAfterMs < 0 && text.includes('data: ')) firstDataAfterMs = Date.now() - started;
  }
  return { text, events: text.split('\n\n').filter(Boolean), firstDataAfterMs };
}

const dataOf = (events: string[]) =>
  events.filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice('data: '.length)));

test("llama-server's stream shape: first chunk role + content null, no refusal/logprobs, usage chunk with choices [] after the finish chunk", async () => {
  await withServer(
    () => ({ content: 'Hello there, world.', dialect: 'llama-server' }),
    async (server, client) => {
      const { events } = await rawStream(server);
      const chunks = dataOf(events);
      assert.deepEqual(chunks[0].choices, [
        { index: 0, delta: { role: 'assistant', content: null }, finish_reason: null },
      ]);
      assert.ok(
        chunks.every((chunk) => !('usage' in chunk) || chunk.choices.length === 0),
        'no usage: null on content chunks',
      );
      assert.ok(
        chunks.every((chunk) => chunk.choices.every((choice: Record<string, unknown>) => !('logprobs' in choice))),
      );
      assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
      assert.deepEqual(chunks.at(-1).choices, []);
      assert.equal(typeof chunks.at(-1).usage.prompt_tokens, 'number');
      assert.equal(events.at(-1), 'data: [DONE]');

      // The openai client reads it as any other stream.
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      assert.equal(content, 'Hello there, world.');
    },
  );
});

test('reasoning streams apart from the content, in reasoning_content (default) or reasoning, and is in the non-streamed message too', async () => {
  const reasoning = 'The user greets me; I should greet back politely.';
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    await withServer(
      () => ({ content: 'Hi!', reasoning, reasoningField: field, dialect: 'llama-server' }),
      async (server, client) => {
        const chunks = dataOf((await rawStream(server)).events);
        const streamed = chunks.map((chunk) => chunk.choices[0]?.delta?.[field] ?? '').join('');
        assert.equal(streamed, reasoning);
        const firstContent = chunks.findIndex((chunk) => chunk.choices[0]?.delta?.content);
        const reasoningAfterContent = chunks.slice(firstContent).some((chunk) => chunk.choices[0]?.delta?.[field]);
        assert.ok(firstContent > 0 && !reasoningAfterContent, 'the reasoning comes before the content');
        const completion = await client.chat.completions.create({
          model: 'm',
          messages: [{ role: 'user', content: 'hi' }],
        });
        assert.equal((completion.choices[0]?.message as unknown as Record<string, unknown>)[field], reasoning);
        assert.equal(completion.choices[0]?.message.content, 'Hi!');
      },
    );
  }
});

test('while it "processes the prompt" the server sends only SSE comment pings, which the openai client does not surface', async () => {
  await withServer(
    () => ({ content: 'Done.', dialect: 'llama-server', promptProcessingMs: 700, pingIntervalMs: 200 }),
    async (server, client) => {
      const { events, firstDataAfterMs } = await rawStream(server);
      const pingsBeforeData = events.slice(
        0,
        events.findIndex((event) => event.startsWith('data: ')),
      );
      assert.ok(pingsBeforeData.length >= 2, `expected pings first, got ${JSON.stringify(events.slice(0, 4))}`);
      assert.ok(pingsBeforeData.every((event) => event === ':'));
      assert.ok(firstDataAfterMs >= 650, `first data after ${firstDataAfterMs} ms`);

      const started = Date.now();
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      const headersAfterMs = Date.now() - started;
      let firstChunkAfterMs = -1;
      for await (const _chunk of stream) if (firstChunkAfterMs < 0) firstChunkAfterMs = Date.now() - started;
      assert.ok(headersAfterMs < 500, `the response started after ${headersAfterMs} ms`);
      assert.ok(firstChunkAfterMs >= 650, `the client saw a chunk after ${firstChunkAfterMs} ms: a ping surfaced`);
    },
  );
});

test("errorBody answers with a server's own body: llama-server's context overflow reaches the client with its type", async () => {
  await withServer(
    () => ({ status: 400, errorBody: llamaServerContextOverflowBody(8199, 8192) }),
    async (_server, client) => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.type, 'exceed_context_size_error');
      assert.equal(error.code, 400);
      assert.match(error.message, /request \(8199 tokens\) exceeds the available context size \(8192 tokens\)/);
    },
  );
});

test('a history tool call whose arguments are not JSON is refused with HTTP 500 like llama-server, without asking the script', async () => {
  let scriptCalls = 0;
  const history: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'Look it up.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"query": "BYD 20' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'Error: the arguments are not valid JSON.' },
  ];
  await withServer(
    () => {
      scriptCalls += 1;
      return { content: 'ok' };
    },
    async (server, client) => {
      const error = await client.chat.completions.create({ model: 'm', messages: history }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof OpenAI.InternalServerError, `expected a 500, got ${String(error)}`);
      assert.match(error.message, /Failed to parse tool call arguments as JSON/);
      assert.equal(error.type, 'server_error');
      assert.equal(scriptCalls, 0);
      assert.equal(server.requests[0]?.status, 500);

      const fixed = history.map((message) =>
        message.role === 'assistant'
          ? {
              ...message,
              tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } }],
            }
          : message,
      );
      const completion = await client.chat.completions.create({ model: 'm', messages: fixed });
      assert.equal(completion.choices[0]?.message.content, 'ok');
    },
  );
  const lenient = await ScriptedModelServer.start({
    script: () => ({ content: 'accepted' }),
    acceptInvalidToolCallArguments: true,
  });
  try {
    const client = new OpenAI({ baseURL: lenient.baseUrl, apiKey: 'k', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'm', messages: history });
    assert.equal(completion.choices[0]?.message.content, 'accepted');
  } finally {
    await lenient.close();
  }
});
