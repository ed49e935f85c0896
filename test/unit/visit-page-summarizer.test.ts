import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ToolInputError } from '../../activities/tools/tool-definition';
import {
  createModelPageSummarizer,
  parsePageSummary,
  splitIntoChunks,
  type PageToSummarize,
} from '../../activities/tools/visit/page-summarizer';
import { createOpenAIChatModel } from '../../activities/model/openai-chat-model';
import { fakeChatModel } from '../fakes/fake-chat-model';

/** A chat model answering each extraction call with `reply(prompt, callIndex)`. */
function fakeModel(reply: (prompt: string, callIndex: number) => string | Error) {
  return fakeChatModel((request, index) => reply(String(request.messages[0]?.content), index));
}

function controls() {
  const heartbeats: unknown[] = [];
  return {
    signal: new AbortController().signal,
    heartbeat: (details?: unknown) => heartbeats.push(details),
    heartbeats,
  };
}

const PAGE: PageToSummarize = {
  goal: 'How many vehicles did BYD sell in 2024?',
  url: 'https://news.example/byd-2024',
  title: 'BYD sales 2024',
  markdown: 'BYD sold 4,272,145 vehicles in 2024, up 41 percent.\n\nThe company also opened a plant in Hungary.',
};

describe('createModelPageSummarizer', () => {
  test('asks the model once for a short page and reads its JSON', async () => {
    const model = fakeModel(() =>
      JSON.stringify({
        rational: 'The first paragraph has the number.',
        evidence: 'BYD sold 4,272,145 vehicles in 2024',
        summary: 'BYD sold 4,272,145 vehicles.',
      }),
    );
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'extractor-model' });
    const { heartbeat, signal, heartbeats } = controls();
    const summary = await summarizer.summarize(PAGE, { heartbeat, signal });
    assert.deepEqual(summary, {
      rational: 'The first paragraph has the number.',
      evidence: 'BYD sold 4,272,145 vehicles in 2024',
      summary: 'BYD sold 4,272,145 vehicles.',
    });
    assert.equal(model.calls.length, 1);
    const call = model.calls[0];
    assert.equal(call?.request.model, 'extractor-model');
    assert.equal(call?.controls.signal, signal, 'the abort signal reaches the model');
    const prompt = model.promptOf(0);
    assert.match(prompt, /How many vehicles did BYD sell in 2024\?/);
    assert.match(prompt, /BYD sold 4,272,145 vehicles/);
    assert.match(prompt, /https:\/\/news\.example\/byd-2024/);
    assert.match(prompt, /"rational".*"evidence".*"summary"/);
    // Before the call and while it streams, always with the piece's progress.
    assert.ok(heartbeats.length >= 2);
    assert.ok(
      heartbeats.every(
        (details) => JSON.stringify(details) === JSON.stringify({ summarizing: PAGE.url, part: 1, of: 1 }),
      ),
    );
  });

  test('splits a long page into chunks, heartbeats between them, and merges the extractions', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index}: ${'detail '.repeat(20)}`);
    const markdown = paragraphs.join('\n\n');
    const model = fakeModel((prompt, index) => {
      if (prompt.startsWith('Several extractions'))
        return JSON.stringify({ rational: 'merged', evidence: 'all the evidence', summary: 'the merged summary' });
      return JSON.stringify({
        rational: `part ${index + 1}`,
        evidence: `evidence from part ${index + 1}`,
        summary: `summary ${index + 1}`,
      });
    });
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'm', maxChunkCharacters: 1_000 });
    const { heartbeat, signal, heartbeats } = controls();
    const summary = await summarizer.summarize({ ...PAGE, markdown }, { heartbeat, signal });

    const chunks = splitIntoChunks(markdown, 1_000);
    assert.ok(chunks.length >= 4, `expected several chunks, got ${chunks.length}`);
    const extractionCalls = model.calls.length - 1;
    assert.equal(extractionCalls, chunks.length, 'one call per chunk, then one merge');
    for (let index = 0; index < chunks.length; index += 1) {
      const prompt = model.promptOf(index);
      assert.match(prompt, new RegExp(`part ${index + 1} of ${chunks.length}`));
      assert.ok(prompt.includes(chunks[index] as string), `chunk ${index + 1} is in its prompt`);
    }
    const mergePrompt = model.promptOf(model.calls.length - 1);
    for (let index = 1; index <= chunks.length; index += 1)
      assert.ok(mergePrompt.includes(`evidence from part ${index}`));
    assert.match(mergePrompt, /How many vehicles did BYD sell/);
    assert.deepEqual(summary, { rational: 'merged', evidence: 'all the evidence', summary: 'the merged summary' });
    // Before each chunk and the merge, and while each call streams: each beat names its piece.
    const pieces = new Set(heartbeats.map((details) => JSON.stringify(details)));
    assert.equal(pieces.size, chunks.length + 1, 'one progress per chunk and one for the merge');
    assert.equal(heartbeats.length, 2 * (chunks.length + 1));
  });

  test('merges in rounds when the extractions themselves are too long for one call', async () => {
    const markdown = Array.from({ length: 12 }, (_, index) => `Section ${index} ${'x'.repeat(950)}`).join('\n\n');
    let merges = 0;
    const model = fakeModel((prompt) => {
      if (prompt.startsWith('Several extractions')) {
        merges += 1;
        return JSON.stringify({ rational: 'r', evidence: 'm'.repeat(300), summary: `merge ${merges}` });
      }
      return JSON.stringify({ rational: 'r', evidence: 'e'.repeat(400), summary: 's' });
    });
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'm', maxChunkCharacters: 1_000 });
    const { heartbeat, signal } = controls();
    const summary = await summarizer.summarize({ ...PAGE, markdown }, { heartbeat, signal });
    assert.ok(merges > 1, 'several merge calls');
    assert.equal(summary.summary, `merge ${merges}`, 'the last merge is the answer');
  });

  test('falls back to the raw answer when the JSON is malformed', async () => {
    const model = fakeModel(() => 'BYD sold about 4.27 million vehicles {not json');
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'm' });
    const summary = await summarizer.summarize(PAGE, controls());
    assert.deepEqual(summary, {
      rational: '',
      evidence: '',
      summary: 'BYD sold about 4.27 million vehicles {not json',
    });
  });

  test('a failing model call becomes a plain Error naming the model (Temporal retries it)', async () => {
    const cause = Object.assign(new Error('503 Service Unavailable'), { status: 503 });
    const model = fakeModel(() => cause);
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'extractor-model' });
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
    const model = fakeModel(() => {
      abort.abort(reason);
      return new Error('request aborted');
    });
    const summarizer = createModelPageSummarizer({ chatModel: model, model: 'm' });
    await assert.rejects(
      summarizer.summarize(PAGE, { signal: abort.signal, heartbeat: () => undefined }),
      (error: unknown) => error === reason,
    );
  });

  test('accepts the OpenAI chat model (checked by the compiler; no request is made)', () => {
    assert.ok(
      createModelPageSummarizer({
        chatModel: createOpenAIChatModel({ apiKey: 'not-needed', baseUrl: 'http://127.0.0.1:9/v1' }),
        model: 'm',
      }),
    );
  });

  test('rejects a tiny chunk size', () => {
    assert.throws(
      () => createModelPageSummarizer({ chatModel: fakeModel(() => ''), model: 'm', maxChunkCharacters: 10 }),
      RangeError,
    );
  });
});

describe('parsePageSummary', () => {
  test('reads JSON inside a code fence after a <think> block, with the spelling "rationale"', () => {
    const answer =
      '<think>The goal asks for {numbers}.</think>\n```json\n{"rationale": "r", "evidence": ["a", "b"], "summary": "s"}\n```';
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
