import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createCompressContext } from '../../activities/compression-activity';
import { createCallModel } from '../../activities/model-activity';
import {
  countConversationTokens,
  countMessageTokens,
  countsLabel,
  type TokenCounter,
} from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type {
  CallModelInput,
  CallModelOutput,
  CompressContextInput,
  CompressContextOutput,
} from '../../src/core/activity-contracts';
import type { ChatMessage } from '../../src/core/messages';
import { loadConversation, loadConversationEntries, putConversation, putMessage } from '../../src/storage/conversation';
import { fakeChatModel } from '../fakes/fake-chat-model';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

// Token counts carried forward with the conversation (issue 21): a model call counts only the
// messages new since the last one; a conversation stored without counts (before they were kept)
// is counted whole, once; counts are only trusted from the counter that made them.

/** Counts words, remembering every text it was asked to count; with no encoding (null) its counts are not carried. */
function recordingCounter(encoding: string | null = 'words'): TokenCounter & { counted: string[] } {
  const counted: string[] = [];
  const count = (text: string) => (counted.push(text), text.split(/\s+/).filter(Boolean).length);
  return encoding === null ? { counted, count } : { counted, count, encoding };
}

/** The same count, recording nothing: what recounting everything gives. */
const recount: TokenCounter = { count: (text) => text.split(/\s+/).filter(Boolean).length };

const SYSTEM: ChatMessage = { role: 'system', content: 'You are a careful research assistant with tools.' };
const QUESTION: ChatMessage = { role: 'user', content: 'Which company sold more cars in 2024?' };
const CALL =
  '<think>Look it up.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "cars"}}\n</tool_call>';
const observation = (index: number) =>
  `<tool_response>\n${'Sales figures for the year, by maker and month. '.repeat(20)}(${index})\n</tool_response>`;

function modelCaller(counter: TokenCounter) {
  const store = new MemoryTranscriptStore();
  const callModel = createCallModel({
    chatModel: fakeChatModel(() => CALL),
    store,
    tokenCounter: counter,
    modelDefaults: { model: 'm', temperature: 0, topP: 1, maxOutputTokens: 100 },
    tools: new ToolRegistry(),
  });
  const call = (conversation: string, append: CallModelInput['append'] = [], modelCall = 1): Promise<CallModelOutput> =>
    new MockActivityEnvironment().run(callModel, {
      workflowId: 'wf',
      modelCall,
      conversation,
      append,
      model: { model: 'm' },
      protocol: 'deep-research' as const,
      tools: [],
    }) as Promise<CallModelOutput>;
  return { store, call };
}

/** A conversation stored the way workers before issue 21 stored it: a manifest without counts, written as they wrote it. */
async function storedWithoutCounts(store: MemoryTranscriptStore, messages: ChatMessage[]): Promise<string> {
  const references = await Promise.all(messages.map((message) => putMessage(store, message)));
  return store.putText(JSON.stringify({ kind: 'conversation', messages: references }));
}

const observationMessage = (index: number): CallModelInput['append'] => [
  { role: 'user', parts: [{ text: observation(index) }] },
];

/** What the call sent: the conversation it returned without its reply. */
async function promptOf(store: MemoryTranscriptStore, output: CallModelOutput): Promise<ChatMessage[]> {
  return (await loadConversation(store, output.conversation)).slice(0, -1);
}

describe('token counts carried forward', () => {
  test('each model call counts only the messages new since the last one, and its estimate is what recounting gives', async () => {
    const counter = recordingCounter();
    const { store, call } = modelCaller(counter);
    let conversation = await storedWithoutCounts(store, [SYSTEM, QUESTION]);
    for (let index = 1; index <= 5; index += 1) {
      counter.counted.length = 0;
      const output = await call(conversation, index === 1 ? [] : observationMessage(index), index);
      const prompt = await promptOf(store, output);
      assert.equal(output.estimatedPromptTokens, countConversationTokens(prompt, recount), `call ${index}'s estimate`);
      // The first call counts the two stored messages; the later ones only the new observation. Then the reply (usage and its count).
      const expected = index === 1 ? [SYSTEM.content, QUESTION.content] : [observation(index)];
      assert.deepEqual(counter.counted.slice(0, -2), expected, `call ${index} counted`);
      assert.equal(counter.counted.filter((text) => text === SYSTEM.content).length, index === 1 ? 1 : 0);
      conversation = output.conversation;
    }
    // The manifest carries a count per message, each what counting that message gives.
    const entries = await loadConversationEntries(store, conversation);
    const messages = await loadConversation(store, conversation);
    assert.deepEqual(entries.tokens, {
      counter: countsLabel(counter),
      counts: messages.map((message) => countMessageTokens(message, recount)),
    });
    assert.equal(messages.length, 2 + 5 + 4);
  });

  test('a long conversation stored without counts (before they were kept) loads and is counted whole, once', async () => {
    const counter = recordingCounter();
    const { store, call } = modelCaller(counter);
    const old: ChatMessage[] = [SYSTEM, QUESTION];
    for (let turn = 1; turn <= 20; turn += 1)
      old.push({ role: 'assistant', content: CALL }, { role: 'user', content: observation(turn) });
    old.pop();
    const first = await call(await storedWithoutCounts(store, old), observationMessage(20), 21);
    const prompt = await promptOf(store, first);
    assert.equal(prompt.length, old.length + 1);
    assert.equal(first.estimatedPromptTokens, countConversationTokens(prompt, recount));
    assert.equal(
      counter.counted.filter((text) => text === SYSTEM.content).length,
      1,
      'each stored message counted once',
    );
    assert.deepEqual(
      (await loadConversationEntries(store, first.conversation)).tokens?.counts,
      (await loadConversation(store, first.conversation)).map((message) => countMessageTokens(message, recount)),
    );

    // From then on the counts are carried.
    counter.counted.length = 0;
    const second = await call(first.conversation, observationMessage(21), 22);
    assert.deepEqual(counter.counted.slice(0, -2), [observation(21)]);
    assert.equal(second.estimatedPromptTokens, countConversationTokens(await promptOf(store, second), recount));
  });

  test('counts made by another counter, or that do not fit the messages, are not trusted: the conversation is counted again', async () => {
    const counter = recordingCounter();
    const { store, call } = modelCaller(counter);
    const references = [await putMessage(store, SYSTEM), await putMessage(store, QUESTION)];
    const label = countsLabel(counter) as string;
    for (const tokens of [
      { counter: 'characters/4+4/message', counts: [1, 1] },
      { counter: label, counts: [1] },
      { counter: label, counts: [1, -1] },
    ]) {
      counter.counted.length = 0;
      const output = await call(await putConversation(store, references, tokens));
      assert.equal(
        output.estimatedPromptTokens,
        countConversationTokens([SYSTEM, QUESTION], recount),
        JSON.stringify(tokens),
      );
      assert.deepEqual(counter.counted.slice(0, 2), [SYSTEM.content, QUESTION.content]);
    }
  });

  test('a counter without an encoding recounts the whole conversation every call and stores no counts (the behaviour before issue 21)', async () => {
    const counter = recordingCounter(null);
    const { store, call } = modelCaller(counter);
    let conversation = await storedWithoutCounts(store, [SYSTEM, QUESTION]);
    for (let index = 1; index <= 3; index += 1) {
      counter.counted.length = 0;
      const output = await call(conversation, index === 1 ? [] : observationMessage(index), index);
      assert.equal(
        counter.counted.filter((text) => text === SYSTEM.content).length,
        1,
        `call ${index} counts the system prompt again`,
      );
      assert.equal(output.estimatedPromptTokens, countConversationTokens(await promptOf(store, output), recount));
      assert.equal((await loadConversationEntries(store, output.conversation)).tokens, undefined);
      conversation = output.conversation;
    }
  });

  test('a user message joined to the user message before it is counted again, whole; the others stay carried', async () => {
    const counter = recordingCounter();
    const { store, call } = modelCaller(counter);
    const first = await call(await storedWithoutCounts(store, [SYSTEM, QUESTION]));
    const second = await call(first.conversation, observationMessage(1), 2);
    // A compression that took the last observation in leaves the conversation ending in a user message, its counts carried.
    const entries = await loadConversationEntries(store, second.conversation);
    const endingInUser = await putConversation(
      store,
      entries.messages.slice(0, -1),
      entries.tokens && { ...entries.tokens, counts: entries.tokens.counts.slice(0, -1) },
    );
    counter.counted.length = 0;
    const final = await call(endingInUser, [{ role: 'user', parts: [{ text: 'Answer now.' }] }], 3);
    const prompt = await promptOf(store, final);
    assert.equal(prompt.length, 4);
    assert.equal(prompt.at(-1)?.content, `${observation(1)}\n\nAnswer now.`);
    assert.deepEqual(counter.counted.slice(0, -2), [`${observation(1)}\n\nAnswer now.`]);
    assert.equal(final.estimatedPromptTokens, countConversationTokens(prompt, recount));
  });
});

describe('token counts carried through compression', () => {
  async function compressed(turns: number, input: Partial<CompressContextInput>) {
    const counter = recordingCounter();
    const store = new MemoryTranscriptStore();
    const compress = createCompressContext({
      chatModel: fakeChatModel(() => 'A short summary of the steps.'),
      store,
      tokenCounter: counter,
    });
    const messages: ChatMessage[] = [SYSTEM, QUESTION];
    for (let turn = 1; turn <= turns; turn += 1)
      messages.push({ role: 'assistant', content: CALL }, { role: 'user', content: observation(turn) });
    const references = await Promise.all(messages.map((message) => putMessage(store, message)));
    const conversation = await putConversation(store, references, {
      counter: countsLabel(counter) as string,
      counts: messages.map((message) => countMessageTokens(message, recount)),
    });
    const output = (await new MockActivityEnvironment().run(compress, {
      workflowId: 'wf',
      conversation,
      append: [],
      protocol: 'deep-research' as const,
      question: QUESTION.content,
      keepRecentTurns: 2,
      targetTokens: 1_000_000,
      summarize: false,
      model: { model: 'm' },
      ...input,
    })) as CompressContextOutput;
    const result = await loadConversation(store, output.conversation);
    return { counter, output, result, entries: await loadConversationEntries(store, output.conversation) };
  }

  test('stubbing counts only the stubbed observations; the messages left as they were keep their counts', async () => {
    const { counter, output, result, entries } = await compressed(6, {});
    assert.equal(output.stubbedObservations, 4);
    assert.equal(counter.counted.includes(SYSTEM.content), false, 'the system prompt is not counted again');
    assert.equal(counter.counted.includes(observation(6)), false, 'a recent observation is not counted again');
    assert.equal(counter.counted.length, 4, 'one count per stub');
    assert.equal(output.contextTokens, countConversationTokens(result, recount));
    assert.deepEqual(
      entries.tokens?.counts,
      result.map((message) => countMessageTokens(message, recount)),
    );
  });

  test('with a summary and the final request, the total is still what recounting gives', async () => {
    const { output, result, entries } = await compressed(6, {
      summarize: true,
      targetTokens: 50,
      finalAnswer: { request: 'Answer now.' },
    });
    assert.equal(output.summarizedTurns, 4);
    assert.equal(output.contextTokens, countConversationTokens(result, recount));
    assert.deepEqual(
      entries.tokens?.counts,
      result.map((message) => countMessageTokens(message, recount)),
    );
  });
});
