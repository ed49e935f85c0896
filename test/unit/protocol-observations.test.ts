import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type { ChatMessage } from '../../src/core/messages';
import { classicReactProtocol } from '../../src/core/protocols/classic-react-protocol';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import { nativeToolProtocol } from '../../src/core/protocols/native-tool-protocol';

// What each protocol says an observation is, and its tool results as compression reads and rewrites them.

const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('deep-research: user messages with <tool_response> blocks', () => {
  const protocol = deepResearchProtocol;
  const message = user('<tool_response>\nfirst\n</tool_response>\n<tool_response>second</tool_response>');

  test('is an observation only as a user message holding a <tool_response>', () => {
    assert.equal(protocol.isObservation(message), true);
    assert.equal(protocol.isObservation(user('Which company sold more cars?')), false);
    assert.equal(protocol.isObservation({ role: 'assistant', content: '<tool_response>x</tool_response>' }), false);
  });

  test('its results are the blocks’ texts without the newlines that frame them', () => {
    assert.deepEqual(protocol.observationResults(message), ['first', 'second']);
    assert.deepEqual(protocol.observationResults(user('no results')), []);
  });

  test('rewritten, each block is framed by newlines and the text between blocks stays', () => {
    assert.deepEqual(
      protocol.withObservationResults(message, ['FIRST']),
      user('<tool_response>\nFIRST\n</tool_response>\n<tool_response>\nsecond\n</tool_response>'),
    );
    const rendered = protocol.renderObservations([
      { callId: 'a', name: 'x', parts: [{ text: 'one' }] },
      { callId: 'b', name: 'y', parts: [{ text: 'two' }] },
    ]);
    const content = rendered[0]?.parts.map((part) => ('text' in part ? part.text : '')).join('') ?? '';
    assert.deepEqual(
      protocol.observationResults(user(content)),
      ['one', 'two'],
      'reads what renderObservations writes',
    );
    assert.equal(
      protocol.withObservationResults(user(content), ['one', 'two']).content,
      content,
      'unchanged results, unchanged text',
    );
  });
});

describe('native: tool messages', () => {
  const protocol = nativeToolProtocol;
  const message: ChatMessage = { role: 'tool', toolCallId: 'a', content: 'the result' };

  test('a tool message is one result, its whole text', () => {
    assert.equal(protocol.isObservation(message), true);
    assert.equal(protocol.isObservation(user('<tool_response>x</tool_response>')), false);
    assert.deepEqual(protocol.observationResults(message), ['the result']);
    assert.deepEqual(protocol.observationResults(user('x')), []);
  });

  test('rewritten, its id stays', () => {
    assert.deepEqual(protocol.withObservationResults(message, ['stub']), {
      role: 'tool',
      toolCallId: 'a',
      content: 'stub',
    });
  });
});

describe('classic: user messages starting with Observation:', () => {
  const protocol = classicReactProtocol;
  const message = user('Observation: first\nObservation: second');

  test('is an observation when a user message starts with "Observation:"', () => {
    assert.equal(protocol.isObservation(message), true);
    assert.equal(protocol.isObservation(user('Observation:no space')), true);
    assert.equal(protocol.isObservation(user('The question. Observation: inside')), false);
  });

  test('its results are the texts after each "Observation: ", up to the next (the newline between included)', () => {
    assert.deepEqual(protocol.observationResults(message), ['first\n', 'second']);
    assert.deepEqual(protocol.observationResults(user('Question. Observation: x')), []);
  });

  test('rewritten, each result is put back after its label', () => {
    assert.equal(
      protocol.withObservationResults(message, ['FIRST', 'SECOND']).content,
      'Observation: FIRSTObservation: SECOND',
    );
    assert.equal(
      protocol.withObservationResults(message, [undefined as unknown as string, 'SECOND']).content,
      'Observation: first\nObservation: SECOND',
    );
  });
});
