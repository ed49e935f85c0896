import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { LlamaServer } from './support/llama-server';

// What llama.cpp's server does, checked against the real thing: the facts the model activity,
// its error classification and the scripted model server of the ordinary suite are written
// against. When llama.cpp changes one of them, this file says which.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const LOOKUP: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'Look up a fact.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
};
/** A conversation holding a tool result: the tiny model answers "The answer is above." to it. */
const AFTER_A_TOOL_RESULT: ChatCompletionMessageParam[] = [
  { role: 'user', content: QUESTION },
  { role: 'assistant', content: '<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD"}}\n</tool_call>' },
  { role: 'user', content: '<tool_response>\nBYD sold 4,272,145 vehicles in 2024.\n</tool_response>' },
];

function clientOf(server: LlamaServer): OpenAI {
  return new OpenAI({ baseURL: server.baseUrl, apiKey: 'not-needed', maxRetries: 0 });
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The HTTP status and error body of a request the server refuses. */
async function refusal(
  request: Promise<unknown>,
): Promise<{ status: number | undefined; error: Record<string, unknown> }> {
  try {
    await request;
  } catch (error) {
    assert.ok(error instanceof OpenAI.APIError, `expected an APIError, got ${String(error)}`);
    return { status: error.status, error: error.error as Record<string, unknown> };
  }
  assert.fail('the server accepted the request');
}

describe('llama-server with the ChatML tools model', () => {
  let server: LlamaServer;
  let openai: OpenAI;

  beforeAll(async () => {
    server = await LlamaServer.start({ model: 'tiny-chatml', contextSize: 2048 });
    openai = clientOf(server);
  });

  afterAll(async () => {
    await server?.close();
  });

  test('a stream: a role chunk with content null, a chunk per piece of text, a finish chunk, a usage chunk without choices, then [DONE]', async () => {
    const chunks = await collect(
      await openai.chat.completions.create({
        model: server.modelName,
        messages: AFTER_A_TOOL_RESULT,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 50,
      }),
    );
    const [first, ...rest] = chunks;
    assert.deepEqual(first?.choices[0]?.delta, { role: 'assistant', content: null });
    assert.equal(first?.choices[0]?.finish_reason, null);
    const usageChunk = rest.pop();
    const finishChunk = rest.pop();
    assert.deepEqual(
      rest.map((chunk) => chunk.choices[0]?.delta.content),
      ['The', ' answer', ' is', ' above', '.'],
    );
    assert.equal(finishChunk?.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(finishChunk?.choices[0]?.delta, {});
    assert.deepEqual(usageChunk?.choices, []);
    // The end of the turn (EOS) is counted as a completion token.
    assert.equal(usageChunk?.usage?.completion_tokens, 6);
    assert.equal(usageChunk?.usage?.prompt_tokens, await server.promptTokens({ messages: AFTER_A_TOOL_RESULT }));

    const raw = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: AFTER_A_TOOL_RESULT, stream: true, max_tokens: 50 }),
    });
    const events = (await raw.text()).split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'data: [DONE]');
    // Without stream_options.include_usage there is no usage chunk.
    assert.ok(!events.some((event) => event.includes('"choices":[]')));
  });

  test('a stop string ends the reply with finish_reason stop and is cut from the content; max_tokens ends it with length', async () => {
    const stopped = await openai.chat.completions.create({
      model: server.modelName,
      messages: AFTER_A_TOOL_RESULT,
      stop: [' above'],
      max_tokens: 50,
    });
    assert.equal(stopped.choices[0]?.finish_reason, 'stop');
    assert.equal(stopped.choices[0]?.message.content, 'The answer is');

    const cut = await collect(
      await openai.chat.completions.create({
        model: server.modelName,
        messages: AFTER_A_TOOL_RESULT,
        stream: true,
        max_tokens: 2,
      }),
    );
    assert.equal(cut.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'The answer');
    assert.equal(cut.at(-1)?.choices[0]?.finish_reason, 'length');
  });

  test('a prompt longer than the context is refused with HTTP 400 exceed_context_size_error, streaming or not', async () => {
    const tooLong: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(300) },
    ];
    const promptTokens = await server.promptTokens({ messages: tooLong });
    assert.ok(promptTokens > 2048);
    for (const stream of [false, true]) {
      const { status, error } = await refusal(
        openai.chat.completions.create({ model: server.modelName, messages: tooLong, stream, max_tokens: 5 }),
      );
      assert.equal(status, 400);
      assert.deepEqual(error, {
        code: 400,
        message: `request (${promptTokens} tokens) exceeds the available context size (2048 tokens), try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: promptTokens,
        n_ctx: 2048,
      });
    }
  });

  test('native tool calls: parsed from <tool_call> into streamed tool_calls deltas, finish_reason tool_calls', async () => {
    const chunks = await collect(
      await openai.chat.completions.create({
        model: server.modelName,
        messages: [{ role: 'user', content: QUESTION }],
        tools: [LOOKUP],
        tool_choice: 'auto',
        stream: true,
        max_tokens: 100,
      }),
    );
    const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    assert.ok(deltas.length >= 2, 'the arguments arrive in pieces');
    assert.equal(deltas[0]?.index, 0);
    assert.equal(deltas[0]?.function?.name, 'lookup');
    assert.match(deltas[0]?.id ?? '', /^\w+$/);
    assert.ok(
      deltas.slice(1).every((delta) => delta.function?.name === undefined && delta.id === undefined),
      'name and id come once, in the first delta',
    );
    assert.deepEqual(JSON.parse(deltas.map((delta) => delta.function?.arguments ?? '').join('')), { query: 'BYD' });
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), '');
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
  });

  test('a history tool call whose arguments are not JSON is refused with HTTP 500', async () => {
    const { status, error } = await refusal(
      openai.chat.completions.create({
        model: server.modelName,
        tools: [LOOKUP],
        max_tokens: 5,
        messages: [
          { role: 'user', content: QUESTION },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'lookup', arguments: '{"query": "BY' } }],
          },
          { role: 'tool', tool_call_id: 'call-1', content: 'Error: the arguments are not valid JSON.' },
        ],
      }),
    );
    assert.equal(status, 500);
    assert.equal(error.type, 'server_error');
    assert.match(String(error.message), /^Failed to parse tool call arguments as JSON/);
  });

  test('output that is not valid UTF-8 ends the stream with an error event and no finish reason', async () => {
    const chunks: ChatCompletionChunk[] = [];
    const stream = await openai.chat.completions.create({
      model: server.modelName,
      messages: [{ role: 'user', content: QUESTION }],
      stream: true,
      max_tokens: 5,
      // Token 255 is the lone byte 0xFF, never valid UTF-8.
      ...({ logit_bias: { 255: 100 } } as object),
    });
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
      (error: unknown) =>
        error instanceof OpenAI.APIError && /does not match the expected .* format/.test(error.message),
    );
    assert.deepEqual(
      chunks.map((chunk) => chunk.choices[0]?.delta),
      [{ role: 'assistant', content: null }],
    );
  });

  test('a per-request grammar shapes a reply without tools; with tools the server refuses it (HTTP 400)', async () => {
    const shaped = await openai.chat.completions.create({
      model: server.modelName,
      messages: [{ role: 'user', content: QUESTION }],
      max_tokens: 20,
      ...({ grammar: 'root ::= "BYD sold more."' } as object),
    });
    assert.equal(shaped.choices[0]?.message.content, 'BYD sold more.');

    const { status, error } = await refusal(
      openai.chat.completions.create({
        model: server.modelName,
        messages: [{ role: 'user', content: QUESTION }],
        tools: [LOOKUP],
        max_tokens: 5,
        ...({ grammar: 'root ::= "x"' } as object),
      }),
    );
    assert.equal(status, 400);
    assert.equal(error.message, 'Cannot use custom grammar constraints with tools.');
  });
});

describe('llama-server with a default grammar (--grammar-file)', () => {
  let server: LlamaServer;
  let openai: OpenAI;

  beforeAll(async () => {
    server = await LlamaServer.start({ model: 'tiny-chatml', contextSize: 2048, grammar: 'deep-research.gbnf' });
    openai = clientOf(server);
  });

  afterAll(async () => {
    await server?.close();
  });

  test('shapes every reply to a request without tools', async () => {
    const first = await openai.chat.completions.create({
      model: server.modelName,
      messages: [{ role: 'user', content: QUESTION }],
      max_tokens: 200,
    });
    assert.equal(
      first.choices[0]?.message.content,
      '<think>Let me check</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD"}}\n</tool_call>',
    );
    const after = await openai.chat.completions.create({
      model: server.modelName,
      messages: AFTER_A_TOOL_RESULT,
      max_tokens: 200,
    });
    assert.equal(
      after.choices[0]?.message.content,
      '<think>Let me check</think>\n<answer>The answer is above.</answer>',
    );
  });

  test('does not apply to a request with tools (the tool-call grammar replaces it), and applies again with tool_choice none', async () => {
    const withTools = await openai.chat.completions.create({
      model: server.modelName,
      messages: [{ role: 'user', content: QUESTION }],
      tools: [LOOKUP],
      tool_choice: 'auto',
      max_tokens: 200,
    });
    assert.equal(withTools.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(withTools.choices[0]?.message.tool_calls?.length, 1);

    const none = await openai.chat.completions.create({
      model: server.modelName,
      messages: AFTER_A_TOOL_RESULT,
      tools: [LOOKUP],
      tool_choice: 'none',
      max_tokens: 200,
    });
    assert.equal(
      none.choices[0]?.message.content,
      '<think>Let me check</think>\n<answer>The answer is above.</answer>',
    );
  });
});

describe('llama-server with the thinking model (--reasoning-format deepseek)', () => {
  let server: LlamaServer;
  let openai: OpenAI;

  beforeAll(async () => {
    server = await LlamaServer.start({ model: 'tiny-thinking', contextSize: 2048, reasoningFormat: 'deepseek' });
    openai = clientOf(server);
  });

  afterAll(async () => {
    await server?.close();
  });

  test('the thinking arrives in delta.reasoning_content, the answer in delta.content, the tags in neither', async () => {
    const chunks = await collect(
      await openai.chat.completions.create({
        model: server.modelName,
        messages: AFTER_A_TOOL_RESULT,
        stream: true,
        max_tokens: 50,
      }),
    );
    const deltas = chunks.map(
      (chunk) =>
        chunk.choices[0]?.delta as (ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined,
    );
    assert.equal(deltas.map((delta) => delta?.reasoning_content ?? '').join(''), 'Let me check');
    assert.equal(deltas.map((delta) => delta?.content ?? '').join(''), 'The answer is above.');
    const firstContent = deltas.findIndex((delta) => delta?.content);
    assert.ok(
      deltas.slice(firstContent).every((delta) => delta?.reasoning_content === undefined),
      'all the reasoning comes before the content',
    );

    const whole = await openai.chat.completions.create({
      model: server.modelName,
      messages: AFTER_A_TOOL_RESULT,
      max_tokens: 50,
    });
    assert.deepEqual(
      {
        content: whole.choices[0]?.message.content,
        reasoning: (whole.choices[0]?.message as { reasoning_content?: string }).reasoning_content,
      },
      { content: 'The answer is above.', reasoning: 'Let me check' },
    );
  });

  test('a reply cut off while thinking has reasoning and no content, finish_reason length', async () => {
    const chunks = await collect(
      await openai.chat.completions.create({
        model: server.modelName,
        messages: AFTER_A_TOOL_RESULT,
        stream: true,
        max_tokens: 2,
      }),
    );
    const deltas = chunks.map(
      (chunk) =>
        chunk.choices[0]?.delta as (ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined,
    );
    assert.equal(deltas.map((delta) => delta?.reasoning_content ?? '').join(''), 'Let me');
    assert.equal(deltas.map((delta) => delta?.content ?? '').join(''), '');
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'length');
  });

  test('a native tool call after thinking: reasoning_content, then the parsed call', async () => {
    const reply = await openai.chat.completions.create({
      model: server.modelName,
      messages: [{ role: 'user', content: QUESTION }],
      tools: [LOOKUP],
      max_tokens: 100,
    });
    const message = reply.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    assert.equal(message.reasoning_content, 'Let me check');
    assert.equal(
      message.tool_calls?.[0]?.type === 'function' ? message.tool_calls[0].function.name : undefined,
      'lookup',
    );
    assert.equal(reply.choices[0]?.finish_reason, 'tool_calls');
  });
});
