/**
 * The model server's stream read through the openai client as it comes (its own SSE reader) and
 * through the worker's bounded fetch (activities/model/bounded-event-stream.ts, issue 28), over
 * loopback HTTP:
 *
 * - time to reject a stream of one line without a newline: the client alone at a few sizes (openai
 *   6's reader was quadratic, so 200 MB would take hours; 7's is linear but holds the whole line),
 *   the bounded fetch at 200 MB (it stops at the line limit);
 * - throughput of an ordinary stream (OpenAI-shaped chunks of a few characters each), both ways.
 *
 * `npx tsx benchmarks/model-stream.ts [plain sizes in MB, default 5,10,20] [chunks, default 200000]`
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { boundedEventStreamFetch } from '../activities/model/bounded-event-stream';
import { DEFAULT_REPLY_LIMITS, STREAM_BYTES_PER_REPLY_BYTE } from '../activities/model/openai-chat-model';

const plainSizes = (process.argv[2] ?? '5,10,20').split(',').map(Number);
const chunkCount = Number(process.argv[3] ?? 200_000);

/** A server answering `POST /v1/chat/completions` with `endless` MB of one line, or `chunkCount` ordinary chunks. */
async function startServer(): Promise<{ server: Server; baseURL: string; mode: { endlessMegabytes: number } }> {
  const mode = { endlessMegabytes: 0 };
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] })}\n\n`;
  const ordinary = Buffer.from(
    Array.from({ length: chunkCount }, (_, index) => chunk(` word${index % 100}`)).join('') +
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
  );
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (!mode.endlessMegabytes) {
      // In pieces of 16 KiB, as a socket would deliver them.
      let offset = 0;
      const write = () => {
        while (offset < ordinary.length) {
          const piece = ordinary.subarray(offset, offset + 16 * 1024);
          offset += piece.length;
          if (!response.write(piece)) return void response.once('drain', write);
        }
        response.end();
      };
      return write();
    }
    const piece = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    response.write('data: {"x":"');
    const write = () => {
      while (sent < mode.endlessMegabytes * 1024 * 1024 && !response.destroyed) {
        sent += piece.length;
        if (!response.write(piece)) return void response.once('drain', write);
      }
      response.end('\n\n');
    };
    response.on('close', () => (sent = Number.POSITIVE_INFINITY));
    write();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, mode };
}

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
const limits = {
  maxLineBytes: DEFAULT_REPLY_LIMITS.maxLineBytes,
  maxStreamBytes: DEFAULT_REPLY_LIMITS.maxReplyBytes * STREAM_BYTES_PER_REPLY_BYTE,
};

/** Milliseconds to read one streamed reply to its end or its error, and how it ended. */
async function read(client: OpenAI): Promise<{ ms: number; ending: string; characters: number }> {
  const started = performance.now();
  let characters = 0;
  try {
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const chunk of stream) characters += chunk.choices[0]?.delta?.content?.length ?? 0;
    return { ms: performance.now() - started, ending: 'end', characters };
  } catch (error) {
    return {
      ms: performance.now() - started,
      ending: error instanceof Error ? `${error.name}: ${error.message.slice(0, 70)}` : String(error),
      characters,
    };
  }
}

async function main(): Promise<void> {
  const { server, baseURL, mode } = await startServer();
  const plain = new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0, logger: silent });
  const bounded = new OpenAI({
    baseURL,
    apiKey: 'k',
    maxRetries: 0,
    logger: silent,
    fetch: boundedEventStreamFetch(limits),
  });
  console.log(`One line without a newline (line limit ${limits.maxLineBytes} bytes):`);
  for (const megabytes of plainSizes) {
    mode.endlessMegabytes = megabytes;
    const result = await read(plain);
    console.log(`  openai client alone, ${megabytes} MB: ${(result.ms / 1000).toFixed(1)} s (${result.ending})`);
  }
  mode.endlessMegabytes = 200;
  const rejected = await read(bounded);
  console.log(`  bounded fetch, 200 MB: ${rejected.ms.toFixed(0)} ms (${rejected.ending})`);

  mode.endlessMegabytes = 0;
  console.log(`An ordinary stream of ${chunkCount} chunks (best of 5):`);
  for (const [name, client] of [
    ['openai client alone', plain],
    ['bounded fetch', bounded],
    ['openai client alone', plain],
    ['bounded fetch', bounded],
  ] as const) {
    const runs = [];
    for (let run = 0; run < 5; run += 1) runs.push(await read(client));
    const best = Math.min(...runs.map((run) => run.ms));
    console.log(
      `  ${name}: ${best.toFixed(0)} ms, ${((chunkCount / best) * 1000).toFixed(0)} chunks/s (${runs[0]?.characters} characters, ${runs[0]?.ending})`,
    );
  }
  server.close();
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
