import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import OpenAI from 'openai';
import { createCompressContext } from '../../activities/compression-activity';
import { createCallModel } from '../../activities/model-activity';
import { characterEstimateCounter, countConversationTokens } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type {
  CallModelInput,
  CallModelOutput,
  CompressContextInput,
  CompressContextOutput,
} from '../../src/core/activity-contracts';
import type { ChatMessage } from '../../src/core/messages';
import { loadConversation, putConversation, putMessage } from '../../src/storage/conversation';
import type { ChatRequest } from '../../activities/model/chat-model';
import { classifyModelError } from '../../activities/model/openai-errors';
import { chatModelOver, deltaChunk, fakeOpenAI, streamOf, usageChunk } from '../fakes/fake-chat-completions';
import { fakeChatModel } from '../fakes/fake-chat-model';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';
import { llamaServerContextOverflowBody } from '../fakes/model-server-error-bodies';

// The compression activity as the final answer phase uses it (issue 16): the request for the
// answer added last, the question alone, summaries sized to the model's window; and the model
// activity joining a user message to a user message before it.

const MODEL_DEFAULTS = { model: 'm', temperature: 0, topP: 1, maxOutputTokens: 100 };
const REQUEST = 'You have reached the maximum context length you can handle. Stop calling tools now.';
const observation = (index: number) => `${'The quick brown fox jumps over the lazy dog. '.repeat(30)}(${index})`;

/** A deep-research conversation of `turns` turns, each a call and a long observation. */
function deepResearchTurns(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a deep research assistant.' },
    { role: 'user', content: 'Which company sold more cars in 2024?' },
  ];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({
      role: 'assistant',
      content: `<think>Step ${turn}.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "q${turn}"}}\n</tool_call>`,
    });
    messages.push({ role: 'user', content: `<tool_response>\n${observation(turn)}\n</tool_response>` });
  }
  return messages;
}

async function stored(store: MemoryTranscriptStore, messages: ChatMessage[]): Promise<string> {
  return putConversation(store, await Promise.all(messages.map((message) => putMessage(store, message))));
}

/** llama-server's refusal of a request longer than its window, as the chat model reports it. */
const overflow = (window: number) =>
  classifyModelError(
    OpenAI.APIError.generate(
      400,
      llamaServerContextOverflowBody(window + 500, window),
      undefined,
      new Headers({ 'content-type': 'application/json' }),
    ),
    {
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'm',
    },
  );

/** The compression activity over a fake chat model answering each summary request with `respond`'s text. */
function compressor(respond: (request: ChatRequest) => string) {
  const store = new MemoryTranscriptStore();
  const calls: ChatRequest[] = [];
  const chatModel = fakeChatModel((request) => {
    calls.push(request);
    return respond(request);
  });
  const compress = createCompressContext({ chatModel, store, tokenCounter: characterEstimateCounter });
  const run = (input: Partial<CompressContextInput> & { conversation: string }): Promise<CompressContextOutput> =>
    new MockActivityEnvironment().run(compress, {
      workflowId: 'wf',
      append: [],
      protocol: 'deep-research' as const,
      question: 'Which company sold more cars in 2024?',
      keepRecentTurns: 0,
      targetTokens: 100,
      summarize: true,
      model: { model: 'm' },
      ...input,
    });
  return { store, calls, run };
}

describe('compression for the final answer call', () => {
  test('the request is added last, to the last user message, and counted', async () => {
    const { store, run } = compressor(() => 'SUMMARY');
    const conversation = await stored(store, deepResearchTurns(2));
    const output = await run({
      conversation,
      keepRecentTurns: 1,
      summarize: false,
      targetTokens: 10_000,
      finalAnswer: { request: REQUEST },
    });
    const messages = await loadConversation(store, output.conversation);
    assert.equal(messages.length, 6, 'no message of its own: user and assistant still alternate');
    assert.match(messages[5]?.content ?? '', new RegExp(`</tool_response>\\n\\n${REQUEST}$`));
    assert.equal(output.contextTokens, countConversationTokens(messages, characterEstimateCounter));
    assert.equal(output.stubbedObservations, 1, 'the observation older than the turn kept');
    assert.equal(output.summarizedTurns, 0);
  });

  test('native: after the tool messages the request is a user message of its own', async () => {
    const { store, run } = compressor(() => 'SUMMARY');
    const conversation = await stored(store, [
      { role: 'system', content: 's' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'a', content: observation(1) },
    ]);
    const output = await run({
      conversation,
      protocol: 'native',
      keepRecentTurns: 0,
      summarize: false,
      finalAnswer: { request: REQUEST },
    });
    const messages = await loadConversation(store, output.conversation);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'user'],
    );
    assert.equal(output.stubbedObservations, 1, 'every observation stubbed, the last too');
    assert.equal(messages[4]?.content, REQUEST);
  });

  test('every turn folded into the summary: the request joins the question and its summary', async () => {
    const { store, calls, run } = compressor(() => 'SUMMARY: BYD.');
    const conversation = await stored(store, deepResearchTurns(3));
    const output = await run({ conversation, keepRecentTurns: 0, targetTokens: 50, finalAnswer: { request: REQUEST } });
    const messages = await loadConversation(store, output.conversation);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user'],
    );
    assert.match(
      messages[1]?.content ?? '',
      /^Which company sold more cars in 2024\?\n\n\[Summary of the research so far[^\n]*:\]\nSUMMARY: BYD\.\n\nYou have reached/,
    );
    assert.equal(output.summarizedTurns, 3);
    assert.equal(calls.length, 1, 'one summary request: no limits, as always');
    assert.equal(calls[0]?.sampling?.maxOutputTokens, 1_500);
  });

  test('dropTurns: the question alone (no summary), a note where the steps are, then the request', async () => {
    const { store, calls, run } = compressor(() => 'unused');
    const question =
      'Which company sold more cars in 2024?\n\n[Summary of the research so far, written to save context; the steps before it are in the transcript store as sha256:x:]\nOld summary.';
    const conversation = await stored(store, [
      deepResearchTurns(0)[0] as ChatMessage,
      { role: 'user', content: question },
      ...deepResearchTurns(2).slice(2),
    ]);
    const output = await run({ conversation, finalAnswer: { request: REQUEST, dropTurns: true } });
    const messages = await loadConversation(store, output.conversation);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user'],
    );
    assert.equal(
      messages[1]?.content,
      `Which company sold more cars in 2024?\n\n[The research steps so far do not fit the model's context window; they are in the transcript store as ${conversation}.]\n\n${REQUEST}`,
    );
    assert.equal(output.stubbedObservations, 0);
    assert.equal(output.summarizedTurns, 2);
    assert.equal(calls.length, 0);
  });
});

describe("summaries sized to the model's window", () => {
  test('with summaryLimits, older turns are summarised in pieces whose requests fit, the summary carried from piece to piece', async () => {
    const { store, calls, run } = compressor((call) => `SUMMARY ${(call.messages[1]?.content as string).length}`);
    const conversation = await stored(store, deepResearchTurns(6));
    const limits = { promptTokens: 700, replyTokens: 200 };
    const output = await run({ conversation, keepRecentTurns: 1, targetTokens: 50, summaryLimits: limits });
    assert.ok(calls.length > 1, `${calls.length} summary requests`);
    for (const call of calls) {
      const promptTokens = (call.messages as Array<{ content: string }>).reduce(
        (sum, message) => sum + characterEstimateCounter.count(message.content),
        0,
      );
      assert.ok(promptTokens <= limits.promptTokens, `a summary request of ${promptTokens} tokens`);
      assert.equal(call.sampling?.maxOutputTokens, 200);
    }
    assert.match(
      calls[1]?.messages[1]?.content as string,
      /Summary so far:\nSUMMARY \d+/,
      'the second piece starts from the first summary',
    );
    assert.equal(output.summarizedTurns, 5);
  });

  test('a summary request refused as too long is sent again in pieces sized from the window the refusal names', async () => {
    let refusals = 0;
    const { store, calls, run } = compressor((call) => {
      const promptTokens = (call.messages as Array<{ content: string }>).reduce(
        (sum, message) => sum + characterEstimateCounter.count(message.content),
        0,
      );
      if (promptTokens > 1_000) {
        refusals += 1;
        throw overflow(1_024);
      }
      return 'SUMMARY';
    });
    const conversation = await stored(store, deepResearchTurns(8));
    const output = await run({ conversation, keepRecentTurns: 1, targetTokens: 50 });
    assert.equal(refusals, 1);
    assert.ok(calls.length > 2, `${calls.length} requests`);
    assert.ok(
      calls.slice(1).every((call) => call.sampling?.maxOutputTokens === 256),
      'the reply at most a quarter of the window',
    );
    assert.equal(output.summarizedTurns, 7);
  });

  test('refused three times: no summary, the stubs stand, the activity does not fail', async () => {
    const { store, calls, run } = compressor(() => {
      throw overflow(100_000);
    });
    const conversation = await stored(store, deepResearchTurns(3));
    const output = await run({ conversation, keepRecentTurns: 1, targetTokens: 10 });
    assert.equal(calls.length, 3);
    assert.equal(output.summarizedTurns, 0);
    assert.equal(output.stubbedObservations, 2);
  });

  test("another failure of the summary request is the activity's failure, as before", async () => {
    const { store, run } = compressor(() => {
      throw classifyModelError(
        OpenAI.APIError.generate(500, { error: { message: 'boom' } }, undefined, new Headers()),
        { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
      );
    });
    const conversation = await stored(store, deepResearchTurns(3));
    await assert.rejects(
      run({ conversation, keepRecentTurns: 1, targetTokens: 10 }),
      /The model endpoint failed with 500/,
    );
  });
});

describe('the model call', () => {
  test('a user message after a user message (the request after a compression took the observations in) joins it', async () => {
    const store = new MemoryTranscriptStore();
    const { openai, calls } = fakeOpenAI(() =>
      streamOf([deltaChunk({ content: '<answer>BYD</answer>' }, 'stop'), usageChunk(100, 5)]),
    );
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: new ToolRegistry([]),
    });
    const conversation = await stored(store, deepResearchTurns(1));
    const input: CallModelInput = {
      workflowId: 'wf',
      modelCall: 2,
      conversation,
      append: [{ role: 'user', parts: [{ text: REQUEST }] }],
      model: { model: 'm' },
      protocol: 'deep-research',
      tools: [],
      finalAnswer: true,
    };
    const output = (await new MockActivityEnvironment().run(callModel, input)) as CallModelOutput;
    const sent = calls[0]?.params.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(
      sent.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.match(sent[3]?.content ?? '', new RegExp(`</tool_response>\\n\\n${REQUEST}$`));
    const messages = await loadConversation(store, output.conversation);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'user', 'assistant'],
    );
  });

  test('the question is never joined to', async () => {
    const store = new MemoryTranscriptStore();
    const { openai, calls } = fakeOpenAI(() =>
      streamOf([deltaChunk({ content: '<answer>BYD</answer>' }, 'stop'), usageChunk(100, 5)]),
    );
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: new ToolRegistry([]),
    });
    const conversation = await stored(store, deepResearchTurns(0));
    const input: CallModelInput = {
      workflowId: 'wf',
      modelCall: 1,
      conversation,
      append: [{ role: 'user', parts: [{ text: '[Message from the user] Focus on 2024.' }] }],
      model: { model: 'm' },
      protocol: 'deep-research',
      tools: [],
    };
    await new MockActivityEnvironment().run(callModel, input);
    assert.deepEqual(
      (calls[0]?.params.messages as Array<{ role: string }>).map((message) => message.role),
      ['system', 'user', 'user'],
    );
  });
});
