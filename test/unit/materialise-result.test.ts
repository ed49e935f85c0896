import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { putConversation, putMessage } from '../../src/storage/conversation';
import { materialiseResult } from '../../src/cli/materialise-result';
import type { ChatMessage } from '../../src/core/messages';
import type { ResearchRunResult } from '../../src/core/run-result';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

async function materialised(messages: ChatMessage[]) {
  const store = new MemoryTranscriptStore();
  const transcript = await putConversation(
    store,
    await Promise.all(messages.map((message) => putMessage(store, message))),
  );
  const result = {
    question: 'What is 2+2?',
    answer: '',
    prediction: '4',
    termination: 'answer',
    transcript,
  } as ResearchRunResult;
  return (await materialiseResult(store, result)).messages;
}

describe('DeepResearch-shaped results carry the reasoning as the <think> part', () => {
  test('reasoning streamed apart becomes <think>…</think> before the content', async () => {
    const messages = await materialised([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '<answer>4</answer>', reasoning: 'Two and two make four.' },
    ]);
    assert.deepEqual(messages.at(-1), {
      role: 'assistant',
      content: '<think>Two and two make four.</think>\n<answer>4</answer>',
    });
  });

  test('a reply cut off while thinking is its <think> part alone', async () => {
    const messages = await materialised([{ role: 'assistant', content: '', reasoning: 'Two and two' }]);
    assert.equal(messages[0]?.content, '<think>Two and two</think>\n');
  });

  test('content that has its own <think> is left as it is; messages without reasoning too', async () => {
    const messages = await materialised([
      { role: 'assistant', content: '<think>Own thought.</think>\n<answer>4</answer>', reasoning: 'Server reasoning.' },
      { role: 'user', content: 'Thanks.' },
    ]);
    assert.deepEqual(messages, [
      { role: 'assistant', content: '<think>Own thought.</think>\n<answer>4</answer>' },
      { role: 'user', content: 'Thanks.' },
    ]);
  });
});
