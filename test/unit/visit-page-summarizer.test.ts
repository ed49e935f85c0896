import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { ToolInputError } from '../../activities/tools/tool-definition';
import {
  createModelPageSummarizer,
  parsePageSummary,
  splitIntoChunks,
  type ChatCompletionClient,
  type PageToSummarize,
} from '../../activities/tools/visit/page-summarizer';

interface RecordedCall {
  body: ChatCompletionCreateParamsNonStreaming;
  signal: AbortSignal | undefined;
}

/** A fake `openai` client: answers each call with the next scripted reply (or what `reply` returns). */
function fakeOpenAI(reply: (prompt: string, callIndex: number) => string | Error) {
  const calls: RecordedCall[] = [];
  const client: ChatCompletionClient = {
    chat: {
      completions: {
        async create(body, options) {
          calls.push({ body, signal: options?.signal });
          const first = body.messages[0];
          const prompt = typeof first?.content === 'string' ? first.content : '';
          const answer = reply(prompt, calls.length - 1);
          if (answer instanceof Error) throw answer;
          return {
            id: `completion-${calls.length}`,
            object: 'chat.completion',
            created: 0,
            model: body.model,
            choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: answer, refusal: null } }],
          } as ChatCompletion;
        },
      },
    },
  };
  return { client, calls, promptOf: (index: number) => String(calls[index]?.body.messages[0]?.content) };
}

function controls() {
  const heartbeats: unknown[] = [];
  return { signal: new AbortController().signal, heartbeat: (details?: unknown) => heartbeats.push(details), heartbeats };
}

const PAGE: PageToSummarize = {
  goal: 'How many vehicles did BYD sell in 2024?',
  url: 'https://news.example/byd-2024',
  title: 'BYD sales 2024',
  markdown: 'BYD sold 4,272,145 vehicles in 2024, up 41 percent.\n\nThe company also opened a plant in Hungary.',
};

describe('createModelPageSummarizer', () => {
  test('asks the model once for a short page and reads its JSON', async () => {
    const openai = fakeOpenAI(() => JSON.stringify({ rational: 'The first paragraph has the number.', evidence: 'BYD sold 4,272,145 vehicles in 2024', summary: 'BYD sold 4,272,145 vehicles.' }));
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'extractor-model' });
    const { heartbeat, signal, heartbeats } = controls();
    const summary = await summarizer.summarize(PAGE, { heartbeat, signal });
    assert.deepEqual(summary, { rational: 'The first paragraph has the number.', evidence: 'BYD sold 4,272,145 vehicles in 2024', summary: 'BYD sold 4,272,145 vehicles.' });
    assert.equal(openai.calls.length, 1);
    const call = openai.calls[0] as RecordedCall;
    assert.equal(call.body.model, 'extractor-model');
    assert.equal((call.body as { stream?: boolean }).stream, undefined, 'non-streaming');
    assert.equal(call.signal, signal, 'the abort signal reaches the client');
    const prompt = openai.promptOf(0);
    assert.match(prompt, /How many vehicles did BYD sell in 2024\?/);
    assert.match(prompt, /BYD sold 4,272,145 vehicles/);
    assert.match(prompt, /https:\/\/news\.example\/byd-2024/);
    assert.match(prompt, /"rational".*"evidence".*"summary"/);
    assert.equal(heartbeats.length, 1);
  });

  test('splits a long page into chunks, heartbeats between them, and merges the extractions', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index}: ${'detail '.repeat(20)}`);
    const markdown = paragraphs.join('\n\n');
    const openai = fakeOpenAI((prompt, index) => {
      if (prompt.startsWith('Several extractions')) return JSON.stringify({ rational: 'merged', evidence: 'all the evidence', summary: 'the merged summary' });
      return JSON.stringify({ rational: `part ${index + 1}`, evidence: `evidence from part ${index + 1}`, summary: `summary ${index + 1}` });
    });
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'm', maxChunkCharacters: 1_000 });
    const { heartbeat, signal, heartbeats } = controls();
    const summary = await summarizer.summarize({ ...PAGE, markdown }, { heartbeat, signal });

    const chunks = splitIntoChunks(markdown, 1_000);
    assert.ok(chunks.length >= 4, `expected several chunks, got ${chunks.length}`);
    const extractionCalls = openai.calls.length - 1;
    assert.equal(extractionCalls, chunks.length, 'one call per chunk, then one merge');
    for (let index = 0; index < chunks.length; index += 1) {
      const prompt = openai.promptOf(index);
      assert.match(prompt, new RegExp(`part ${index + 1} of ${chunks.length}`));
      assert.ok(prompt.includes(chunks[index] as string), `chunk ${index + 1} is in its prompt`);
    }
    const mergePrompt = openai.promptOf(openai.calls.length - 1);
    for (let index = 1; index <= chunks.length; index += 1) assert.ok(mergePrompt.includes(`evidence from part ${index}`));
    assert.match(mergePrompt, /How many vehicles did BYD sell/);
    assert.deepEqual(summary, { rational: 'merged', evidence: 'all the evidence', summary: 'the merged summary' });
    assert.equal(heartbeats.length, chunks.length + 1, 'a heartbeat before each chunk and the merge');
  });

  test('merges in rounds when the extractions themselves are too long for one call', async () => {
    const markdown = Array.from({ length: 12 }, (_, index) => `Section ${index} ${'x'.repeat(950)}`).join('\n\n');
    let merges = 0;
    const openai = fakeOpenAI((prompt) => {
      if (prompt.startsWith('Several extractions')) {
        merges += 1;
        return JSON.stringify({ rational: 'r', evidence: 'm'.repeat(300), summary: `merge ${merges}` });
      }
      return JSON.stringify({ rational: 'r', evidence: 'e'.repeat(400), summary: 's' });
    });
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'm', maxChunkCharacters: 1_000 });
    const { heartbeat, signal } = controls();
    const summary = await summarizer.summarize({ ...PAGE, markdown }, { heartbeat, signal });
    assert.ok(merges > 1, 'several merge calls');
    assert.equal(summary.summary, `merge ${merges}`, 'the last merge is the answer');
  });

  test('falls back to the raw answer when the JSON is malformed', async () => {
    const openai = fakeOpenAI(() => 'BYD sold about 4.27 million vehicles {not json');
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'm' });
    const summary = await summarizer.summarize(PAGE, controls());
    assert.deepEqual(summary, { rational: '', evidence: '', summary: 'BYD sold about 4.27 million vehicles {not json' });
  });

  test('a failing model call becomes a plain Error naming the model (Temporal retries it)', async () => {
    const cause = Object.assign(new Error('503 Service Unavailable'), { status: 503 });
    const openai = fakeOpenAI(() => cause);
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'extractor-model' });
    await assert.rejects(summarizer.summarize(PAGE, controls()), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.ok(!(error instanceof ToolInputError), 'not an observation: retried');
      assert.match(error.message, /extractor-model/);
      assert.match(error.message, /503 Service Unavailable/);
      assert.equal(error.cause, cause);
      return true;
    });
  });

  test('stops with the abort reason when cancelled', async () => {
    const abort = new AbortController();
    const reason = new Error('activity cancelled');
    const openai = fakeOpenAI(() => {
      abort.abort(reason);
      return new Error('request aborted');
    });
    const summarizer = createModelPageSummarizer({ openai: openai.client, model: 'm' });
    await assert.rejects(summarizer.summarize(PAGE, { signal: abort.signal, heartbeat: () => undefined }), (error: unknown) => error === reason);
  });

  test('accepts the real openai client (checked by the compiler; no request is made)', () => {
    const openai = new OpenAI({ apiKey: 'not-needed', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 });
    assert.ok(createModelPageSummarizer({ openai, model: 'm' }));
  });

  test('rejects a tiny chunk size', () => {
    assert.throws(() => createModelPageSummarizer({ openai: fakeOpenAI(() => '').client, model: 'm', maxChunkCharacters: 10 }), RangeError);
  });
});

describe('parsePageSummary', () => {
  test('reads JSON inside a code fence after a <think> block, with the spelling "rationale"', () => {
    const answer = '<think>The goal asks for {numbers}.</think>\n```json\n{"rationale": "r", "evidence": ["a", "b"], "summary": "s"}\n```';
    assert.deepEqual(parsePageSummary(answer), { rational: 'r', evidence: 'a\n\nb', summary: 's' });
  });

  test('an object without the expected fields, or no object, is kept as raw text', () => {
    assert.deepEqual(parsePageSummary('{"answer": 42}'), { rational: '', evidence: '', summary: '{"answer": 42}' });
    assert.deepEqual(parsePageSummary('  plain words  '), { rational: '', evidence: '', summary: 'plain words' });
    assert.deepEqual(parsePageSummary(''), { rational: '', evidence: '', summary: '' });
  });
});

describe('splitIntoChunks', () => {
  test('keeps pieces under the limit, on paragraph boundaries, losing no text', () => {
    const text = ['short one', 'y'.repeat(2_500), 'another', 'z'.repeat(300)].join('\n\n');
    const chunks = splitIntoChunks(text, 1_000);
    for (const chunk of chunks) assert.ok(chunk.length <= 1_000);
    assert.equal(chunks.join('').replace(/\n/g, ''), text.replace(/\n/g, ''));
    assert.deepEqual(splitIntoChunks('small', 1_000), ['small']);
  });
});
