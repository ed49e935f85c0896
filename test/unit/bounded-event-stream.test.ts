import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import {
  boundedEventStreamFetch,
  framedEventStream,
  ModelStreamLimitError,
  ServerSentEventFramer,
} from '../../activities/model/bounded-event-stream';
import { OpenAIChatModel } from '../../activities/model/openai-chat-model';
import { FailureTypes } from '../../src/core/failure-types';

// The model server's response body cut into whole events in one pass and bounded (issue 28):
// the framer on its own, then under the real openai client and the chat model, with a fake fetch.

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const LIMITS = { maxLineBytes: 4 * 1024 * 1024, maxStreamBytes: 64 * 1024 * 1024 };

/** The events the framer gives for `text` fed in pieces of `size` bytes, as text. */
function framed(text: string, size: number): string[] {
  const framer = new ServerSentEventFramer(LIMITS);
  const bytes = encoder.encode(text);
  const events: string[] = [];
  for (let start = 0; start < bytes.length; start += size)
    events.push(...framer.push(bytes.subarray(start, start + size)).map((event) => decoder.decode(event)));
  const rest = framer.flush();
  if (rest) events.push(decoder.decode(rest));
  return events;
}

/** A body of `totalBytes` bytes of `a` after `prefix`, made as it is read, counting what was read. */
function endlessLine(totalBytes: number, prefix = 'data: {"x":"') {
  const piece = new Uint8Array(64 * 1024).fill(0x61);
  const read = { bytes: 0 };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(prefix));
    },
    pull(controller) {
      if (read.bytes >= totalBytes) return controller.close();
      read.bytes += piece.length;
      controller.enqueue(piece.slice());
    },
  });
  return { body, read };
}

const chunkLine = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The chat model over the real openai client, whose fetch answers every request with `body()`. */
function chatModelAnswering(body: () => ReadableStream<Uint8Array>, maxReplyBytes = 1024 * 1024) {
  const requests: string[] = [];
  const fakeFetch = (async (input: string | URL | Request) => {
    requests.push(String(input));
    return new Response(body(), { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
  const client = new OpenAI({
    baseURL: 'http://model.test/v1',
    apiKey: 'k',
    maxRetries: 0,
    fetch: boundedEventStreamFetch(LIMITS, fakeFetch),
  });
  return { model: new OpenAIChatModel({ client, baseUrl: 'http://model.test/v1', maxReplyBytes }), requests };
}

const textBody = (text: string, pieceBytes = 7) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = encoder.encode(text);
      for (let start = 0; start < bytes.length; start += pieceBytes)
        controller.enqueue(bytes.slice(start, start + pieceBytes));
      controller.close();
    },
  });

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
const controls = () => ({ signal: new AbortController().signal });

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ApplicationFailure, String(error));
  return error;
}

describe('ServerSentEventFramer', () => {
  test('gives each event whole, ending with its blank line, however the bytes are cut', () => {
    const text =
      'data: one\n\n: ping\n\ndata: two\r\n\r\ndata: three\r\rdata: {"a":\n"b"}\n\nevent: x\ndata: four\n\ndata: tail';
    const expected = [
      'data: one\n\n',
      ': ping\n\n',
      'data: two\r\n\r\n',
      'data: three\r\r',
      'data: {"a":\n"b"}\n\n',
      'event: x\ndata: four\n\n',
      'data: tail',
    ];
    for (const size of [1, 2, 3, 5, 8, 13, 1_000]) assert.deepEqual(framed(text, size), expected, `pieces of ${size}`);
  });

  test('a line end after other bytes does not end an event with the one before it', () => {
    assert.deepEqual(framed('data: a\nb\nc\n\n', 1), ['data: a\nb\nc\n\n']);
    assert.deepEqual(framed('x\r\ny\r\n\r\n', 1), ['x\r\ny\r\n\r\n']);
  });

  test('refuses a line longer than the limit, and a stream longer than its limit, as soon as it passes', () => {
    const framer = new ServerSentEventFramer({ maxLineBytes: 100, maxStreamBytes: 1_000 });
    framer.push(encoder.encode(`data: ${'a'.repeat(90)}\n\n`));
    assert.throws(
      () => framer.push(encoder.encode(`data: ${'a'.repeat(95)}`)),
      (error: unknown) => error instanceof ModelStreamLimitError && error.limit === 'line',
    );
    const long = new ServerSentEventFramer({ maxLineBytes: 100, maxStreamBytes: 1_000 });
    assert.throws(
      () => {
        for (let index = 0; index < 100; index += 1) long.push(encoder.encode(`data: ${'b'.repeat(40)}\n\n`));
      },
      (error: unknown) => error instanceof ModelStreamLimitError && error.limit === 'stream',
    );
  });

  test('200 MB without a newline: refused after reading about the line limit, in well under a second', async () => {
    const { body, read } = endlessLine(200 * 1024 * 1024);
    const started = Date.now();
    const reader = framedEventStream(body, LIMITS).getReader();
    const error = await (async () => {
      for (;;) await reader.read();
    })().catch((caught: unknown) => caught);
    assert.ok(error instanceof ModelStreamLimitError && error.limit === 'line', String(error));
    assert.ok(read.bytes <= LIMITS.maxLineBytes + 256 * 1024, `read ${read.bytes} bytes`);
    assert.ok(Date.now() - started < 1_000, `${Date.now() - started} ms`);
  });
});

describe('OpenAIChatModel over the bounded body', () => {
  test('an ordinary stream cut anywhere reads as before', async () => {
    const text =
      chunkLine({ role: 'assistant', content: '' }) +
      chunkLine({ content: 'Hello, ' }) +
      chunkLine({ content: 'wörld 🌍' }) +
      chunkLine({}, 'stop') +
      'data: [DONE]\n\n';
    for (const pieceBytes of [1, 7, 4096]) {
      const { model } = chatModelAnswering(() => textBody(text, pieceBytes));
      const reply = await model.chat(request, controls());
      assert.equal(reply.content, 'Hello, wörld 🌍');
      assert.equal(reply.finishReason, 'stop');
    }
  });

  test('a 200 MB line: ReplyTooLarge, not retried, naming REACT_AGENT_MODEL_MAX_LINE_BYTES', async () => {
    let read = { bytes: 0 };
    const { model } = chatModelAnswering(() => {
      const line = endlessLine(200 * 1024 * 1024);
      read = line.read;
      return line.body;
    });
    const failure = await failureOf(model.chat(request, controls()));
    assert.equal(failure.type, FailureTypes.modelReplyTooLarge);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /REACT_AGENT_MODEL_MAX_LINE_BYTES/);
    assert.ok(read.bytes <= LIMITS.maxLineBytes + 256 * 1024, `read ${read.bytes} bytes`);
  });

  test('a reply whose text passes the limit in small chunks: ReplyTooLarge naming REACT_AGENT_MODEL_MAX_REPLY_BYTES', async () => {
    const content = Array.from({ length: 2_000 }, () => chunkLine({ content: 'x'.repeat(100) })).join('');
    const { model } = chatModelAnswering(() => textBody(content + chunkLine({}, 'stop'), 4096), 50_000);
    const failure = await failureOf(model.chat(request, controls()));
    assert.equal(failure.type, FailureTypes.modelReplyTooLarge);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /passed 50000 bytes \(REACT_AGENT_MODEL_MAX_REPLY_BYTES\)/);
  });

  test("a native tool call's arguments count: a 50 MB call is refused at the reply limit", async () => {
    const start = chunkLine({
      tool_calls: [{ index: 0, id: 'call-1', type: 'function', function: { name: 'lookup', arguments: '' } }],
    });
    const piece = chunkLine({ tool_calls: [{ index: 0, function: { arguments: 'a'.repeat(64 * 1024) } }] });
    let sent = 0;
    const { model } = chatModelAnswering(
      () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode(start));
          },
          pull(controller) {
            if (sent >= 50 * 1024 * 1024) return controller.close();
            sent += 64 * 1024;
            controller.enqueue(encoder.encode(piece));
          },
        }),
    );
    const failure = await failureOf(model.chat(request, controls()));
    assert.equal(failure.type, FailureTypes.modelReplyTooLarge);
    assert.ok(sent <= 2 * 1024 * 1024, `the server was read for ${sent} bytes of arguments`);
  });
});
