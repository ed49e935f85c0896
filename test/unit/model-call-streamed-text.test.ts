import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { heartbeatOf, StreamedText } from '../../activities/model-call/streamed-text';

describe('StreamedText', () => {
  test('reasoning, content and tool calls in the order they came, a new line where the kind changes and for each further tool call', () => {
    const streamed = new StreamedText();
    streamed.add({ kind: 'reasoning', text: 'Think' });
    streamed.add({ kind: 'reasoning', text: 'ing.' });
    streamed.add({ kind: 'content', text: 'Answer' });
    streamed.add({ kind: 'content', text: '' });
    streamed.add({ kind: 'tool-name', text: 'search', toolCall: 0 });
    streamed.add({ kind: 'tool-arguments', text: '{"q":1}', toolCall: 0 });
    streamed.add({ kind: 'tool-name', text: 'visit', toolCall: 1 });
    streamed.add({ kind: 'tool-arguments', text: '{}', toolCall: 1 });
    assert.equal(streamed.tail.text, 'Thinking.\nAnswer\nsearch{"q":1}\nvisit{}');
    assert.equal(streamed.tail.characters, streamed.tail.text.length);
  });
});

describe('heartbeatOf', () => {
  test('before the first chunk: how long it waited, nothing streamed', () => {
    assert.deepEqual(
      heartbeatOf(
        { chunks: 0, contentCharacters: 0, reasoningCharacters: 0, waitingForFirstChunkMs: 12_400 },
        new StreamedText(),
      ),
      {
        chunks: 0,
        characters: 0,
        waitingForFirstTokenSeconds: 12,
      },
    );
  });

  test('once text flows: the counts and the streamed tail', () => {
    const streamed = new StreamedText();
    streamed.add({ kind: 'reasoning', text: 'Hm' });
    streamed.add({ kind: 'content', text: 'Yes' });
    assert.deepEqual(heartbeatOf({ chunks: 2, contentCharacters: 3, reasoningCharacters: 2 }, streamed), {
      chunks: 2,
      characters: 3,
      reasoningCharacters: 2,
      streamed: 'Hm\nYes',
      streamedCharacters: 6,
    });
  });
});
