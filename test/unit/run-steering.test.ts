import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import { approvalDecisionProblem, approvalRefusal, injectedMessageProblem, limitChangesProblem, type LimitChanges } from '../../src/core/run-steering';
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
    assert.match(limitChangesProblem(state, { maxModelCalls: 0 }, now) ?? '', /limits\.maxModelCalls must be an integer from 1 to 10000, got 0/);
    assert.equal(limitChangesProblem(state, { maxModelCalls: 4 }, now), 'maxModelCalls 4 is below the 5 calls already made');
    assert.equal(limitChangesProblem(state, { maxDurationMinutes: 6 }, now), 'maxDurationMinutes 6 is not more than the 6.0 minutes already used');
    assert.equal(limitChangesProblem(state, { maxDurationMinutes: 7 }, now), undefined);
  });

  test('approveToolCall: its shape, and a call that is waiting', () => {
    assert.equal(approvalDecisionProblem({ callId: 'c1', approved: true }, ['c1']), undefined);
    assert.equal(approvalDecisionProblem({ callId: 'c1' } as never, ['c1']), 'give callId and approved');
    assert.equal(approvalDecisionProblem({ callId: 'nope', approved: true }, ['c1', 'c2']), 'no tool call nope is waiting for approval (waiting: c1, c2)');
    assert.equal(approvalDecisionProblem({ callId: 'nope', approved: true }, []), 'no tool call nope is waiting for approval');
  });
});

describe('the observation of a call that needs approval', () => {
  test('approved: none (it runs); denied: by whom and why; no decision: the timeout', () => {
    assert.equal(approvalRefusal('python', { callId: 'c', approved: true }, 30), undefined);
    assert.equal(
      approvalRefusal('python', { callId: 'c', approved: false, reviewer: 'bob', reason: 'not for this question' }, 30),
      'Not run: the call of "python" was denied by bob: not for this question',
    );
    assert.equal(approvalRefusal('python', { callId: 'c', approved: false }, 30), 'Not run: the call of "python" was denied.');
    assert.equal(approvalRefusal('python', undefined, 0.5), 'Not run: no one approved this call of "python" within 0.5 minutes.');
  });
});
