import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import type { ParsedTurn, ProtocolName } from '../../src/core/protocols';
import {
  decideFinalAnswer,
  FINAL_ANSWER_RETRIES_WHEN_TRUNCATED,
  markTruncatedAnswer,
  truncatedFinalAnswerNote,
  truncatedReplyNote,
  truncationOf,
} from '../../src/core/protocols/truncated-reply';

const parseTags = (content: string) => deepResearchProtocol.parse({ content, toolCalls: [] }, 1);
const answered = (answer: string): ParsedTurn => ({ thought: '', toolCalls: [], answer });

describe('the tag parser marks an <answer> that was never closed', () => {
  test('unclosed: the partial text is the answer and the turn says so', () => {
    const turn = parseTags('<think>ok</think>\n<answer>BYD sold more cars th');
    assert.equal(turn.answer, 'BYD sold more cars th');
    assert.equal(turn.unclosedAnswer, true);
  });
  test('unclosed and empty: a problem, still marked', () => {
    const turn = parseTags('<think>ok</think>\n<answer>');
    assert.equal(turn.answer, undefined);
    assert.equal(turn.unclosedAnswer, true);
  });
  test('closed: not marked', () => {
    assert.equal(parseTags('<answer>BYD</answer>').unclosedAnswer, undefined);
  });
});

describe('truncationOf', () => {
  const cases: Array<[string, ProtocolName, ParsedTurn, string, ReturnType<typeof truncationOf>]> = [
    ['native length answer', 'native', answered('BYD sold more cars th'), 'length', 'output_limit'],
    ['native stop answer', 'native', answered('BYD'), 'stop', undefined],
    [
      'native length tool call',
      'native',
      { thought: '', toolCalls: [{ id: 'a', name: 'lookup', arguments: {} }] },
      'length',
      'output_limit',
    ],
    [
      'native tool_calls',
      'native',
      { thought: '', toolCalls: [{ id: 'a', name: 'lookup', arguments: {} }] },
      'tool_calls',
      undefined,
    ],
    ['classic length', 'classic', answered('BYD sold'), 'length', 'output_limit'],
    ['classic stop', 'classic', answered('BYD'), 'stop', undefined],
    ['tags unclosed, length', 'deep-research', parseTags('<answer>BYD sold'), 'length', 'output_limit'],
    ['tags unclosed, stop', 'deep-research', parseTags('<answer>BYD sold'), 'stop', 'unclosed_answer'],
    ['tags length inside <think>', 'deep-research', parseTags('<think>I need to'), 'length', 'output_limit'],
    [
      'tags length after a tool call',
      'deep-research',
      parseTags('<tool_call>{"name":"a","arguments":{}}</tool_call> and then'),
      'length',
      'output_limit',
    ],
    [
      'tags closed answer, length (rambled on after it)',
      'deep-research',
      parseTags('<answer>BYD</answer> and so on'),
      'length',
      undefined,
    ],
    ['tags closed answer, stop', 'deep-research', parseTags('<answer>BYD</answer>'), 'stop', undefined],
  ];
  for (const [name, protocol, turn, finishReason, expected] of cases) {
    test(name, () => assert.equal(truncationOf(protocol, turn, finishReason), expected));
  }
});

describe('notes', () => {
  test("the loop note says nothing was used and asks for a shorter reply in the protocol's format", () => {
    const note = truncatedReplyNote('deep-research', 'output_limit');
    assert.match(note, /cut off/);
    assert.match(note, /none of it was used/);
    assert.match(note, /shorter/);
    assert.match(note, /<answer><\/answer>/);
    assert.match(truncatedReplyNote('classic', 'output_limit'), /"Final Answer:"/);
    assert.doesNotMatch(truncatedReplyNote('native', 'output_limit'), /<answer>|Final Answer/);
    assert.match(truncatedReplyNote('deep-research', 'unclosed_answer'), /<answer> was not closed/);
  });
  test('the final answer note asks for the answer again, much shorter', () => {
    assert.match(truncatedFinalAnswerNote('native', 'output_limit'), /^Your answer was cut off.*much shorter/);
  });
  test('a partial answer is marked by how it was cut', () => {
    assert.equal(
      markTruncatedAnswer('BYD sold more cars th ', 'output_limit'),
      'BYD sold more cars th [cut off: the reply reached the output token limit]',
    );
    assert.equal(markTruncatedAnswer('BYD', 'unclosed_answer'), 'BYD [cut off: the answer was never closed]');
  });
});

describe('decideFinalAnswer', () => {
  test('a complete reply is accepted, with or without an answer', () => {
    assert.deepEqual(decideFinalAnswer('native', answered('BYD'), 'stop', 1), { kind: 'accept', answer: 'BYD' });
    assert.deepEqual(decideFinalAnswer('deep-research', parseTags('no tags'), 'stop', 1), { kind: 'accept' });
  });
  test('a truncated one is asked for again while a retry is left, then kept marked', () => {
    assert.equal(FINAL_ANSWER_RETRIES_WHEN_TRUNCATED, 1);
    const cut = parseTags('<answer>BYD sold more cars th');
    const first = decideFinalAnswer('deep-research', cut, 'length', 1);
    assert.equal(first.kind, 'ask_again');
    assert.deepEqual(decideFinalAnswer('deep-research', cut, 'length', 0), {
      kind: 'keep_marked',
      answer: 'BYD sold more cars th [cut off: the reply reached the output token limit]',
    });
  });
  test('cut before any answer text: nothing to keep', () => {
    assert.deepEqual(decideFinalAnswer('deep-research', parseTags('<think>Let me'), 'length', 0), {
      kind: 'keep_marked',
    });
    assert.deepEqual(decideFinalAnswer('classic', { thought: 'x', toolCalls: [], problem: 'format' }, 'length', 0), {
      kind: 'keep_marked',
    });
  });
});
