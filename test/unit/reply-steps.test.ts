import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type { CallModelOutput } from '../../src/core/activity-contracts';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import {
  isCutOffFinalReply,
  isUnusableReply,
  readFinalReply,
  readReply,
  type ReadReply,
  type ReplyContext,
} from '../../src/core/reply-steps';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS } from '../../src/core/run-limits';
import type { RunState } from '../../src/core/run-state';
import { initialRunState } from '../../src/core/run-transitions';

const protocol = deepResearchProtocol;
const context: ReplyContext = { protocol, options: DEFAULT_LOOP_OPTIONS };
const fresh = (): RunState => initialRunState('deep-research', DEFAULT_LIMITS, 0);
const pendingText = (state: RunState) => JSON.stringify(state.pending);

/** A model call's outcome for a reply in the DeepResearch tags. */
function outcome(content: string, finishReason = 'stop'): CallModelOutput {
  return {
    conversation: 'sha256:c',
    assistant: { ref: 'sha256:a', preview: '', characters: content.length },
    turn: protocol.parse({ content, toolCalls: [] }, 3),
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    contextTokens: 2,
    finishReason,
  };
}

const lookup = '<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD"}}\n</tool_call>';
const unreadable = '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>';
/** The `unusable-replies` marker's answer in a run that has it. */
const marker = true;

/** A usable reply: the marker is not asked (isUnusableReply), nor read (the same step either way). */
function readUsable(state: RunState, reply: CallModelOutput, replyContext: ReplyContext): ReadReply {
  assert.equal(
    isUnusableReply(reply, replyContext.protocol),
    false,
    'a usable reply does not ask the unusable-replies marker',
  );
  const read = readReply(state, reply, replyContext, false);
  assert.deepEqual(readReply(state, reply, replyContext, true), read);
  return read;
}

describe('readReply: one typed step per reply', () => {
  test('tool calls: run them', () => {
    const read = readUsable(fresh(), outcome(`<think>x</think>\n${lookup}`), context);
    assert.equal(read.step.kind, 'run_tools');
    assert.deepEqual(read.step.kind === 'run_tools' && read.step.calls.map((call) => call.name), ['lookup']);
    assert.equal(read.step.kind === 'run_tools' && read.step.malformedLimitReached, false);
  });

  test('an answer ends the run, its calls left open to be answered at the end', () => {
    const read = readUsable(fresh(), outcome(`${lookup}\n<answer>BYD</answer>`), context);
    assert.deepEqual(read.given, { text: 'BYD' });
    assert.equal(read.step.kind, 'end');
    if (read.step.kind !== 'end') return;
    const { openTurn, ...ending } = read.step.ending;
    assert.deepEqual(ending, { kind: 'answered', answer: { text: 'BYD' } });
    assert.deepEqual(
      openTurn?.calls.map((call) => call.name),
      ['lookup'],
    );
    assert.equal(openTurn?.results.size, 0, 'none of them ran');
  });

  test('an answer the schema refuses, with attempts left: the correction, its calls answered not run, call again', () => {
    const read = readUsable(fresh(), outcome(`${lookup}\n<answer>not json</answer>`), {
      ...context,
      answerSchema: { type: 'object' },
    });
    assert.equal(read.step.kind, 'call_again');
    assert.deepEqual(read.given, { text: 'not json' });
    assert.equal(read.state.answerAttempts, 1);
    assert.equal(read.state.toolCallsAnswered, 1);
    assert.match(
      pendingText(read.state),
      /Not run: the reply also contained a final answer[\s\S]*does not match the required JSON schema/,
    );
  });

  test('an answer the schema refuses after the last attempt: failed, with the answer', () => {
    const state = { ...fresh(), answerAttempts: 2 };
    const read = readUsable(state, outcome('<answer>not json</answer>'), {
      ...context,
      answerSchema: { type: 'object' },
    });
    assert.equal(read.step.kind === 'end' && read.step.ending.kind, 'failed');
    assert.equal(read.step.kind === 'end' && read.step.ending.kind === 'failed' && read.step.ending.answer, 'not json');
  });

  test('a matching structured answer carries its parsed value', () => {
    const read = readUsable(fresh(), outcome('<answer>{"winner": "BYD"}</answer>'), {
      ...context,
      answerSchema: { type: 'object', required: ['winner'] },
    });
    assert.deepEqual(read.step.kind === 'end' && read.step.ending, {
      kind: 'answered',
      answer: { text: '{"winner": "BYD"}', parsed: { winner: 'BYD' } },
    });
  });

  test('a reply cut off: a request for a shorter one, its calls not run; the limit in a row ends token-limited', () => {
    const cut = outcome(`${lookup}\n<answer>BYD sold more th`, 'length');
    assert.equal(isUnusableReply(cut, protocol), true, 'the marker is asked');
    let state = fresh();
    for (let index = 1; index < DEFAULT_LOOP_OPTIONS.maxTruncatedReplies; index += 1) {
      const read = readReply(state, cut, context, marker);
      assert.equal(read.step.kind, 'call_again');
      assert.match(pendingText(read.state), /Not run: the reply was cut off[\s\S]*shorter/);
      state = read.state;
    }
    const last = readReply(state, cut, context, marker);
    assert.deepEqual(last.step, { kind: 'end', ending: { kind: 'budget_ended', budget: 'truncated_replies' } });
    assert.equal(last.state.details.replyLimit, 'maxTruncatedReplies');
    assert.equal(last.state.details.truncatedReplies, DEFAULT_LOOP_OPTIONS.maxTruncatedReplies);
    assert.doesNotMatch(pendingText(last.state), /shorter/, 'no request for a shorter reply when the run ends');
  });

  test('a reply cut off in a run recorded before the marker is taken as it is', () => {
    const read = readReply(fresh(), outcome('<answer>BYD sold more th', 'length'), context, false);
    assert.deepEqual(read.step.kind === 'end' && read.step.ending, {
      kind: 'answered',
      answer: { text: 'BYD sold more th' },
    });
    assert.equal(read.state.details.truncatedReplies, 0);
  });

  test('nothing readable: the correction; the limit in a row ends with the error naming the protocol', () => {
    let state = fresh();
    const options = { ...DEFAULT_LOOP_OPTIONS, maxMalformedReplies: 2 };
    const first = readReply(state, outcome('I would rather chat.'), { ...context, options }, marker);
    assert.equal(first.step.kind, 'call_again');
    assert.equal(first.state.details.malformedReplies, 1);
    state = first.state;
    const second = readReply(state, outcome('Still chatting.'), { ...context, options }, marker);
    assert.equal(second.step.kind, 'end');
    if (second.step.kind !== 'end') return;
    const { error, ...ending } = second.step.ending;
    assert.deepEqual(ending, { kind: 'budget_ended', budget: 'malformed_replies' });
    assert.match(error ?? '', /last 2 replies in a row could not be read in the deep-research protocol/);
    assert.equal(second.state.details.replyLimit, 'maxMalformedReplies');
  });

  test('unreadable calls are run (answered with their problem), and the malformed limit ends after them', () => {
    const options = { ...DEFAULT_LOOP_OPTIONS, maxMalformedReplies: 1 };
    const read = readReply(fresh(), outcome(unreadable), { ...context, options }, marker);
    assert.equal(read.step.kind, 'run_tools');
    assert.equal(read.step.kind === 'run_tools' && read.step.malformedLimitReached, true);
  });

  test('a usable reply resets the unusable streak', () => {
    const state = { ...fresh(), unusableReplies: { truncated: 2, malformed: 4 } };
    assert.deepEqual(readUsable(state, outcome(lookup), context).state.unusableReplies, { truncated: 0, malformed: 0 });
  });
});

describe('readFinalReply', () => {
  test('complete: take its answer and leave its calls open', () => {
    const complete = outcome(`${lookup}\n<answer>BYD</answer>`);
    assert.equal(isCutOffFinalReply(complete, protocol, 1), false, 'not cut off: the marker is not asked');
    const read = readFinalReply(fresh(), complete, protocol, 1, false);
    assert.deepEqual(readFinalReply(fresh(), complete, protocol, 1, true), read, 'nor read');
    assert.deepEqual(read.step.kind === 'take' && [read.step.answer, read.step.openCalls.length], ['BYD', 1]);
  });

  test('cut off with a retry left: ask again shorter; without one: keep it, marked', () => {
    const cut = outcome('<answer>BYD sold more th', 'length');
    assert.equal(isCutOffFinalReply(cut, protocol, 1), true, 'the marker is asked');
    const again = readFinalReply(fresh(), cut, protocol, 1, marker);
    assert.deepEqual(again.step, { kind: 'ask_again' });
    assert.match(pendingText(again.state), /answer was cut off/);
    assert.equal(again.state.details.truncatedReplies, 1);
    const kept = readFinalReply(again.state, cut, protocol, 0, marker);
    assert.equal(
      kept.step.kind === 'take' && kept.step.answer,
      'BYD sold more th [cut off: the reply reached the output token limit]',
    );
    assert.equal(kept.state.details.truncatedAnswer, true);
  });

  test('cut off in a run recorded before the marker: taken as it is', () => {
    const read = readFinalReply(fresh(), outcome('<answer>BYD sold more th', 'length'), protocol, 1, false);
    assert.equal(read.step.kind === 'take' && read.step.answer, 'BYD sold more th');
  });
});
