import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import {
  approvalDecisionProblem,
  approvalRefusal,
  finishRequestProblem,
  injectedMessageProblem,
  limitChangesProblem,
  MAX_PENDING_INJECTED_CHARACTERS,
  type ApprovalDecision,
  type LimitChanges,
} from '../../src/core/run-steering';
import { initialRunState } from '../../src/core/run-transitions';

describe('what the message validators refuse', () => {
  test('injectMessage: empty, blank or oversized text', () => {
    assert.equal(injectedMessageProblem({ text: 'Focus on 2024.' }), undefined);
    assert.equal(injectedMessageProblem({ text: '  ' }), 'text must be a non-empty string');
    assert.equal(injectedMessageProblem({ text: 5 }), 'text must be a non-empty string');
    assert.equal(injectedMessageProblem(undefined), 'text must be a non-empty string');
    assert.equal(injectedMessageProblem({ text: 'x'.repeat(20_001) }), 'text is 20001 characters; the most is 20000');
  });

  test('setLimits: unknown or invalid limits, fewer calls than made, no more time than used', () => {
    const state = { ...initialRunState('deep-research', DEFAULT_LIMITS, 0), modelCalls: 5 };
    const now = 6 * 60_000;
    assert.equal(limitChangesProblem(state, { maxModelCalls: 150 }, now), undefined);
    assert.equal(limitChangesProblem(state, undefined, now), 'give the limits to change');
    assert.match(
      limitChangesProblem(state, { maxSteps: 3 } as LimitChanges, now) ?? '',
      /^unknown limits: maxSteps \(known: maxModelCalls, maxDurationMinutes, maxContextTokens, maxTotalTokens, maxCostUsd\)$/,
    );
    assert.match(
      limitChangesProblem(state, { maxModelCalls: 0 }, now) ?? '',
      /limits\.maxModelCalls must be an integer from 1 to 10000, got 0/,
    );
    assert.equal(
      limitChangesProblem(state, { maxModelCalls: 4 }, now),
      'maxModelCalls 4 is below the 5 calls already made',
    );
    assert.equal(
      limitChangesProblem(state, { maxDurationMinutes: 6 }, now),
      'maxDurationMinutes 6 is not more than the 6.0 minutes already used',
    );
    assert.equal(limitChangesProblem(state, { maxDurationMinutes: 7 }, now), undefined);
  });

  test('approveToolCall: its shape, and a call that is waiting', () => {
    assert.equal(approvalDecisionProblem({ callId: 'c1', approved: true }, ['c1']), undefined);
    assert.equal(approvalDecisionProblem({ callId: 'c1' } as never, ['c1']), 'give callId and approved');
    assert.equal(
      approvalDecisionProblem({ callId: 'nope', approved: true }, ['c1', 'c2']),
      'no tool call nope is waiting for approval (waiting: c1, c2)',
    );
    assert.equal(
      approvalDecisionProblem({ callId: 'nope', approved: true }, []),
      'no tool call nope is waiting for approval',
    );
  });
});

describe('what a client sends by update is bounded, and never echoed at length (issue 28 #5, #11)', () => {
  const MIB = 'x'.repeat(1024 * 1024);

  test('injectMessage: the messages waiting for the next model call hold at most 60,000 characters', () => {
    assert.equal(MAX_PENDING_INJECTED_CHARACTERS, 60_000);
    const text = 'y'.repeat(19_999);
    assert.equal(injectedMessageProblem({ text }, 2 * 19_999), undefined);
    assert.equal(
      injectedMessageProblem({ text }, 3 * 19_999),
      '59997 characters of injected messages already wait for the next model call; with these 19999 they would pass the most, 60000. Send it again once the next model call has taken them',
    );
    assert.equal(injectedMessageProblem({ text: 'short' }, 59_995), undefined);
    assert.match(injectedMessageProblem({ text: 'short' }, 59_996) ?? '', /would pass the most, 60000/);
  });

  test('injectMessage: a field beside text is refused, named shortly', () => {
    const problem = injectedMessageProblem({ text: 'hi', [MIB]: MIB } as { text: string });
    assert.match(problem ?? '', /^unknown field: x{39}… \(known: text\)$/);
  });

  test('approveToolCall: a long callId, reason or reviewer is refused without being repeated', () => {
    const problem = approvalDecisionProblem({ callId: MIB, approved: true }, ['c1']);
    assert.equal(problem, `callId is ${MIB.length} characters; the most is 200`);
    assert.equal(
      approvalDecisionProblem({ callId: 'c1', approved: false, reason: MIB }, ['c1']),
      `reason is ${MIB.length} characters; the most is 2000`,
    );
    assert.equal(
      approvalDecisionProblem({ callId: 'c1', approved: false, reviewer: MIB }, ['c1']),
      `reviewer is ${MIB.length} characters; the most is 2000`,
    );
    assert.equal(
      approvalDecisionProblem({ callId: 'c1', approved: false, reviewer: 7 } as unknown as ApprovalDecision, ['c1']),
      'reviewer must be a string',
    );
    assert.match(
      approvalDecisionProblem({ callId: 'c1', approved: true, junk: MIB } as unknown as ApprovalDecision, ['c1']) ?? '',
      /^unknown field: junk \(known: callId, approved, reason, reviewer\)$/,
    );
  });

  test('approveToolCall: ids in the "not waiting" message are shortened, and at most five listed', () => {
    const waiting = ['w'.repeat(150), 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
    const problem = approvalDecisionProblem({ callId: 'n'.repeat(200), approved: true }, waiting) ?? '';
    assert.equal(
      problem,
      `no tool call ${'n'.repeat(39)}… is waiting for approval (waiting: ${'w'.repeat(39)}…, c2, c3, c4, c5 and 2 more)`,
    );
  });

  test('finishNow: reason a string of at most 2,000 characters, no other field', () => {
    assert.equal(finishRequestProblem(undefined), undefined);
    assert.equal(finishRequestProblem({}), undefined);
    assert.equal(finishRequestProblem({ reason: 'enough' }), undefined);
    assert.equal(finishRequestProblem({ reason: null }), undefined, "a client's null is no reason");
    assert.equal(finishRequestProblem({ reason: MIB }), `reason is ${MIB.length} characters; the most is 2000`);
    assert.equal(finishRequestProblem({ reason: { long: MIB } }), 'reason must be a string');
    assert.match(finishRequestProblem({ reason: 'ok', extra: 1 } as { reason: string }) ?? '', /^unknown field: extra/);
  });

  test('setLimits: unknown limits are named shortly, at most three', () => {
    const state = initialRunState('deep-research', DEFAULT_LIMITS, 0);
    const changes = Object.fromEntries(['a', 'b', MIB, 'd', 'e'].map((key) => [key, 1])) as LimitChanges;
    const problem = limitChangesProblem(state, changes, 0) ?? '';
    assert.match(problem, /^unknown limits: a, b, x{39}… and 2 more \(known: /);
    assert.ok(problem.length < 300);
  });
});

describe('the observation of a call that needs approval', () => {
  test('approved: none (it runs); denied: by whom and why; no decision: the timeout', () => {
    assert.equal(approvalRefusal('python', { callId: 'c', approved: true }, 30), undefined);
    assert.equal(
      approvalRefusal('python', { callId: 'c', approved: false, reviewer: 'bob', reason: 'not for this question' }, 30),
      'Not run: the call of "python" was denied by bob: not for this question',
    );
    assert.equal(
      approvalRefusal('python', { callId: 'c', approved: false }, 30),
      'Not run: the call of "python" was denied.',
    );
    assert.equal(
      approvalRefusal('python', undefined, 0.5),
      'Not run: no one approved this call of "python" within 0.5 minutes.',
    );
  });
});
