import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  assistantMessageOf,
  assistantPreview,
  callModelOutput,
  recordReply,
  replyUsage,
  tokenUsageOf,
  withReasoningThought,
} from '../../activities/model-call/reply';
import type { ChatReply } from '../../activities/model/chat-model';
import { characterEstimateCounter, countMessageTokens } from '../../activities/token-counter';
import type { ChatMessage } from '../../src/core/messages';
import { loadConversationEntries, loadMessages, messageReference } from '../../src/storage/conversation';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

function replyOf(overrides: Partial<ChatReply> = {}): ChatReply {
  return { content: 'Paris.', reasoning: '', toolCalls: [], finishReason: 'stop', chunks: 3, ...overrides };
}

const call = (index: number) => ({ id: `call-${index}`, name: 'search', arguments: `{"q":"${index}"}` });

describe('replyUsage', () => {
  test("the server's counts, and the cost of a priced model", () => {
    const usage = replyUsage(
      replyOf({
        usage: { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedPromptTokens: 0, reasoningTokens: 7 },
      }),
      5,
      characterEstimateCounter,
      { m: { input: 1, output: 2 } },
      'm',
    );
    assert.deepEqual(usage, {
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      cachedPromptTokens: 0,
      reasoningTokens: 7,
      costUsd: 3,
    });
    assert.deepEqual(tokenUsageOf(usage), {
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      totalTokens: 2_000_000,
      costUsd: 3,
      // The cache counts go into the run's usage too (issue 31); the reasoning tokens do not.
      cachedPromptTokens: 0,
    });
  });

  test('a server that reports none: our estimate of the prompt, our count of reasoning, content and tool calls; no price, no cost', () => {
    const reply = replyOf({
      reasoning: 'abcd',
      content: 'efgh',
      toolCalls: [{ id: 'c', name: 'ab', arguments: 'cd' }],
    });
    assert.deepEqual(replyUsage(reply, 42, characterEstimateCounter, undefined, 'm'), {
      promptTokens: 42,
      completionTokens: 3,
    });
  });
});

describe('the stored reply', () => {
  test('cleaned content, reasoning, and the native tool calls up to the cap (the first past it kept to be answered)', () => {
    const reply = replyOf({ reasoning: 'Think.', toolCalls: [call(1), call(2), call(3), call(4)] });
    const assistant = assistantMessageOf(reply, 'cleaned', 2);
    assert.deepEqual(assistant, {
      role: 'assistant',
      content: 'cleaned',
      reasoning: 'Think.',
      toolCalls: [call(1), call(2), call(3)],
    });
    assert.deepEqual(assistantMessageOf(replyOf(), 'Paris.', 8), { role: 'assistant', content: 'Paris.' });
  });

  test('its preview: the content, else the tool calls, else the reasoning', () => {
    assert.equal(assistantPreview({ role: 'assistant', content: 'Paris.', toolCalls: [call(1)] }), 'Paris.');
    assert.equal(assistantPreview({ role: 'assistant', content: '', toolCalls: [call(1)] }), 'search({"q":"1"})');
    assert.equal(assistantPreview({ role: 'assistant', content: '', reasoning: 'Hmm.' }), '(reasoning) Hmm.');
    assert.equal(assistantPreview({ role: 'assistant', content: '' }), '');
  });

  test("the turn's thought: the protocol's own, else the reasoning's", () => {
    const turn = { thought: '', toolCalls: [] };
    assert.equal(withReasoningThought(turn, 'I should search.').thought, 'I should search.');
    assert.equal(withReasoningThought({ ...turn, thought: 'Mine.' }, 'I should search.').thought, 'Mine.');
    assert.equal(withReasoningThought(turn, ''), turn);
  });
});

describe('recordReply', () => {
  test('stores the reply and the manifest of the prompt with it, counts carried and the reply counted', async () => {
    const store = new MemoryTranscriptStore();
    const question: ChatMessage = { role: 'user', content: 'Why?' };
    const assistant: ChatMessage = { role: 'assistant', content: 'Because.' };
    const prompt = {
      references: [messageReference(question)],
      messages: [question],
      counts: [99],
      estimatedPromptTokens: 99,
    };
    const recorded = await recordReply(store, characterEstimateCounter, prompt, assistant);
    assert.deepEqual(recorded.assistant, { ref: messageReference(assistant), preview: 'Because.', characters: 8 });
    const entries = await loadConversationEntries(store, recorded.conversation);
    assert.deepEqual(entries.messages, [messageReference(question), messageReference(assistant)]);
    assert.deepEqual(entries.tokens?.counts, [99, countMessageTokens(assistant, characterEstimateCounter)]);
    assert.deepEqual(await loadMessages(store, [recorded.assistant.ref]), [assistant]);

    const output = callModelOutput(
      recorded,
      { thought: 't', toolCalls: [] },
      { promptTokens: 99, completionTokens: 2 },
      'stop',
      98,
    );
    assert.deepEqual(output, {
      ...recorded,
      turn: { thought: 't', toolCalls: [] },
      usage: { promptTokens: 99, completionTokens: 2, totalTokens: 101 },
      contextTokens: 101,
      finishReason: 'stop',
      estimatedPromptTokens: 98,
    });
  });
});
