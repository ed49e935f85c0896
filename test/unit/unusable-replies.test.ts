import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import { validateRunInput } from '../../src/core/run-input';
import { DEFAULT_LOOP_OPTIONS } from '../../src/core/run-limits';
import {
  isMalformed,
  NO_UNUSABLE_REPLIES,
  recordReply,
  replyKind,
  type ReplyKind,
  type UnusableReplyStreak,
} from '../../src/core/unusable-replies';

const parse = (content: string) => deepResearchProtocol.parse({ content, toolCalls: [] }, 1);
const limits = { maxTruncatedReplies: 3, maxMalformedReplies: 5 };

describe('replyKind', () => {
  test('a readable call or an answer is usable', () => {
    assert.deepEqual(
      replyKind(
        'deep-research',
        parse('<tool_call>{"name": "lookup", "arguments": {"query": "x"}}</tool_call>'),
        'stop',
      ),
      { kind: 'usable' },
    );
    assert.deepEqual(replyKind('deep-research', parse('<answer>BYD</answer>'), 'stop'), { kind: 'usable' });
  });
  test('one readable call among unreadable ones is usable', () => {
    const turn = parse(
      '<tool_call>{"name": "lookup", "arguments": {"query": "x"}}</tool_call><tool_call>{nope</tool_call>',
    );
    assert.equal(isMalformed(turn), false);
  });
  test('nothing readable is malformed: prose, an empty reply, only unparseable calls', () => {
    for (const content of [
      'I would rather chat.',
      '',
      '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>',
      '<tool_call>{"arguments": {}}</tool_call>',
    ]) {
      assert.deepEqual(replyKind('deep-research', parse(content), 'stop'), { kind: 'malformed' }, content);
    }
  });
  test('truncation explains anything malformed in the reply', () => {
    assert.deepEqual(replyKind('deep-research', parse('<tool_call>{"name": "lookup", "argu'), 'length'), {
      kind: 'truncated',
      truncation: 'output_limit',
    });
    assert.deepEqual(replyKind('native', { thought: '', toolCalls: [], answer: 'BYD sold' }, 'length'), {
      kind: 'truncated',
      truncation: 'output_limit',
    });
  });
});

describe('recordReply', () => {
  const feed = (kinds: ReplyKind[]) => {
    let streak: UnusableReplyStreak = NO_UNUSABLE_REPLIES;
    const reached: boolean[] = [];
    for (const kind of kinds) {
      const recorded = recordReply(streak, kind, limits);
      streak = recorded.streak;
      reached.push(recorded.limitReached);
    }
    return { streak, reached };
  };
  const truncated: ReplyKind = { kind: 'truncated', truncation: 'output_limit' };
  const malformed: ReplyKind = { kind: 'malformed' };
  const usable: ReplyKind = { kind: 'usable' };

  test('the limit is reached at the Nth unusable reply of a kind in a row', () => {
    assert.deepEqual(feed([truncated, truncated, truncated]).reached, [false, false, true]);
    assert.deepEqual(feed([malformed, malformed, malformed, malformed, malformed]).reached, [
      false,
      false,
      false,
      false,
      true,
    ]);
  });
  test('a usable reply starts both counts again', () => {
    assert.deepEqual(feed([truncated, truncated, usable, truncated, truncated]).reached, [
      false,
      false,
      false,
      false,
      false,
    ]);
    assert.deepEqual(feed([malformed, truncated, usable]).streak, NO_UNUSABLE_REPLIES);
  });
  test('an unusable reply of the other kind does not reset a count', () => {
    const { streak, reached } = feed([truncated, malformed, truncated, malformed, truncated]);
    assert.deepEqual(streak, { truncated: 3, malformed: 2 });
    assert.deepEqual(reached, [false, false, false, false, true]);
  });
  test('defaults: 3 truncated, 5 malformed', () => {
    assert.equal(DEFAULT_LOOP_OPTIONS.maxTruncatedReplies, 3);
    assert.equal(DEFAULT_LOOP_OPTIONS.maxMalformedReplies, 5);
  });
  test('the limits are checked with the run input', () => {
    assert.deepEqual(
      validateRunInput({ question: 'q', loop: { maxTruncatedReplies: 1, maxMalformedReplies: 1_000 } }).problems,
      [],
    );
    assert.deepEqual(
      validateRunInput({ question: 'q', loop: { maxTruncatedReplies: 0, maxMalformedReplies: 2.5 } }).problems,
      [
        'loop.maxTruncatedReplies must be an integer from 1 to 1000, got 0',
        'loop.maxMalformedReplies must be an integer from 1 to 1000, got 2.5',
      ],
    );
  });
});
