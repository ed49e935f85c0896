import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { appendAlternating, preparePrompt, storeMessages } from '../../activities/model-call/prompt';
import { characterEstimateCounter, countMessageTokens } from '../../activities/token-counter';
import type { ChatMessage } from '../../src/core/messages';
import { loadMessages, messageReference, putConversation } from '../../src/storage/conversation';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const system: ChatMessage = { role: 'system', content: 'You research.' };
const question: ChatMessage = { role: 'user', content: 'What is the capital of France?' };
const reply: ChatMessage = { role: 'assistant', content: '<tool_call>{"name":"search"}</tool_call>' };
const observation: ChatMessage = { role: 'user', content: '<tool_response>Paris</tool_response>' };

function carried(messages: ChatMessage[]) {
  return { references: messages.map(messageReference), messages, known: messages.map((_, index) => index + 10) };
}

describe('appendAlternating', () => {
  test('appends after an assistant turn, the new messages named by their content addresses and without counts', () => {
    const appended = appendAlternating(carried([system, question, reply]), [observation]);
    assert.deepEqual(appended.messages, [system, question, reply, observation]);
    assert.deepEqual(appended.references, [system, question, reply, observation].map(messageReference));
    assert.deepEqual(appended.known, [10, 11, 12, undefined]);
    assert.deepEqual(appended.added, [{ message: observation, reference: messageReference(observation) }]);
  });

  test('a user message after a user message is joined to it; the joined one is new and counted again', () => {
    const request: ChatMessage = { role: 'user', content: 'Now give your final answer.' };
    const appended = appendAlternating(carried([system, question, reply, observation]), [request]);
    const joined: ChatMessage = { role: 'user', content: `${observation.content}\n\n${request.content}` };
    assert.deepEqual(appended.messages, [system, question, reply, joined]);
    assert.deepEqual(appended.known, [10, 11, 12, undefined]);
    assert.deepEqual(appended.added, [{ message: joined, reference: messageReference(joined) }]);
  });

  test('the question is never joined to', () => {
    const appended = appendAlternating(carried([system, question]), [observation]);
    assert.deepEqual(appended.messages, [system, question, observation]);
  });

  test('nothing to append: the conversation as it is', () => {
    const appended = appendAlternating(carried([system, question, reply]), []);
    assert.deepEqual(appended, { ...carried([system, question, reply]), added: [] });
  });
});

describe('preparePrompt', () => {
  test('the stored conversation with the pending messages, counted, its new messages stored before it resolves', async () => {
    const store = new MemoryTranscriptStore();
    await storeMessages(
      store,
      [system, question, reply].map((message) => ({ message, reference: messageReference(message) })),
    );
    const conversation = await putConversation(store, [system, question, reply].map(messageReference));
    const prompt = await preparePrompt(store, characterEstimateCounter, conversation, [
      { role: 'user', parts: [{ text: observation.content }] },
    ]);
    assert.deepEqual(prompt.messages, [system, question, reply, observation]);
    const counts = prompt.messages.map((message) => countMessageTokens(message, characterEstimateCounter));
    assert.deepEqual(prompt.counts, counts);
    assert.equal(
      prompt.estimatedPromptTokens,
      counts.reduce((sum, count) => sum + count, 0),
    );
    assert.deepEqual(
      await loadMessages(store, prompt.references),
      prompt.messages,
      'every message of the prompt is stored',
    );
  });

  test('a store that names a message by anything but its content address is refused', async () => {
    const store = new MemoryTranscriptStore();
    const lying = Object.assign(Object.create(store) as MemoryTranscriptStore, {
      putText: async (text: string) => `sha256:not-${text.length}`,
    });
    await assert.rejects(
      storeMessages(lying, [{ message: observation, reference: messageReference(observation) }]),
      /content address/,
    );
  });
});
