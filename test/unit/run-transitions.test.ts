import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type { CallModelOutput } from '../../src/core/activity-contracts';
import {
  appendPending,
  appendPendingText,
  clearPending,
  deliverInjectedMessages,
  prependPendingUncounted,
  setPending,
} from '../../src/core/pending';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import {
  budgetEndBeforeModelCall,
  compressionDue,
  compressionTarget,
  contextOverLimit,
  continueAsNewDue,
  msUntilDeadline,
  nextContextTokens,
  remainingBudgets,
} from '../../src/core/run-budgets';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS } from '../../src/core/run-limits';
import type { RunState } from '../../src/core/run-state';
import {
  answerToolTurn,
  applyCompression,
  applyModelReply,
  hasPromptEstimate,
  hasUnreadableCall,
  askForFinalAnswer,
  closeOpenTurn,
  closingState,
  countModelCall,
  initialRunState,
  observeRepeats,
  openedRunState,
  resumedRunState,
} from '../../src/core/run-transitions';
import { estimateTokens, type Turn } from '../../src/core/turns';

const protocol = deepResearchProtocol;
const fresh = (limits = DEFAULT_LIMITS): RunState => initialRunState('deep-research', limits, 1_000);
const call = (id: string, query: string) => ({ id, name: 'lookup', arguments: { query } });
const text = (state: RunState) => JSON.stringify(state.pending);

function reply(extra: Partial<CallModelOutput> = {}): CallModelOutput {
  return {
    conversation: 'sha256:after',
    assistant: { ref: 'sha256:reply', preview: 'reply', characters: 5 },
    turn: { thought: 'thinking', toolCalls: [] },
    usage: { promptTokens: 300, completionTokens: 20, totalTokens: 320 },
    contextTokens: 320,
    finishReason: 'stop',
    ...extra,
  };
}

describe('pending messages and their token count, one owner', () => {
  test('set, append text, append messages, prepend uncounted, clear', () => {
    let state = setPending(fresh(), [{ role: 'user', parts: [{ text: 'obs' }] }], 40, ['call-1-0']);
    assert.equal(state.pendingTokens, 40);
    assert.deepEqual(state.pendingCallIds, ['call-1-0']);
    state = appendPendingText(state, 'a note of twenty chars');
    assert.equal(state.pendingTokens, 40 + estimateTokens('a note of twenty chars'));
    assert.equal(state.pending.length, 1, 'text joins the last user message');
    state = appendPending(state, [{ role: 'user', parts: [{ text: 'more' }] }], 7);
    assert.equal(state.pending.length, 2);
    assert.equal(state.pendingTokens, 40 + estimateTokens('a note of twenty chars') + 7);
    const before = state.pendingTokens;
    state = prependPendingUncounted(state, [{ role: 'user', parts: [{ text: 'first' }] }]);
    assert.equal(state.pending.length, 3);
    assert.equal(state.pendingTokens, before, 'not counted, as recorded runs did');
    assert.deepEqual(state.pendingCallIds, ['call-1-0']);
    state = clearPending(state);
    assert.deepEqual([state.pending, state.pendingTokens, state.pendingCallIds], [[], 0, []]);
  });

  test('injected messages are added in order, marked as the user’s', () => {
    const state = deliverInjectedMessages(fresh(), ['one', 'two']);
    assert.match(text(state), /\[Message from the user\] one[\s\S]*\[Message from the user\] two/);
    assert.equal(deliverInjectedMessages(fresh(), []).pending.length, 0);
  });
});

describe('budgets as named predicates', () => {
  test('checked before each model call in order: time, calls, total tokens', () => {
    const limits = { ...DEFAULT_LIMITS, maxModelCalls: 2, maxDurationMinutes: 1, maxTotalTokens: 500 };
    const state = {
      ...fresh(limits),
      modelCalls: 2,
      usage: { promptTokens: 400, completionTokens: 200, totalTokens: 600 },
    };
    assert.equal(budgetEndBeforeModelCall(state, 1_000 + 60_000), 'timeout');
    assert.equal(budgetEndBeforeModelCall(state, 1_000 + 59_999), 'max_calls');
    assert.equal(budgetEndBeforeModelCall({ ...state, modelCalls: 1 }, 2_000), 'token_limit');
    assert.equal(
      budgetEndBeforeModelCall({ ...state, modelCalls: 1, limits: { ...limits, maxTotalTokens: 0 } }, 2_000),
      undefined,
      '0 is no total-token budget',
    );
  });

  test('context: calibrated pending estimate, compression threshold and target, the limit', () => {
    const limits = { ...DEFAULT_LIMITS, maxContextTokens: 1_000 };
    const state = { ...fresh(limits), contextTokens: 700, pendingTokens: 100, serverTokensPerEstimatedToken: 1.5 };
    assert.equal(nextContextTokens(state), 850);
    assert.equal(compressionDue(state, DEFAULT_LOOP_OPTIONS), true);
    assert.equal(
      compressionDue(state, { ...DEFAULT_LOOP_OPTIONS, compressAtFraction: 0 }),
      false,
      '0 turns compression off',
    );
    assert.equal(compressionDue({ ...state, contextTokens: 600 }, DEFAULT_LOOP_OPTIONS), false);
    assert.equal(compressionTarget(state, DEFAULT_LOOP_OPTIONS), Math.floor(600 / 1.5));
    assert.equal(contextOverLimit(state), false);
    assert.equal(contextOverLimit({ ...state, contextTokens: 851 }), true);
  });

  test('continue-as-new is due after a call of this run, when suggested or after the configured calls', () => {
    const options = { ...DEFAULT_LOOP_OPTIONS, continueAsNewAfterModelCalls: 3 };
    assert.equal(continueAsNewDue({ ...fresh(), modelCallsThisRun: 0 }, options, true), false);
    assert.equal(continueAsNewDue({ ...fresh(), modelCallsThisRun: 1 }, options, true), true);
    assert.equal(continueAsNewDue({ ...fresh(), modelCallsThisRun: 2 }, options, false), false);
    assert.equal(continueAsNewDue({ ...fresh(), modelCallsThisRun: 3 }, options, false), true);
    assert.equal(
      continueAsNewDue({ ...fresh(), modelCallsThisRun: 3 }, DEFAULT_LOOP_OPTIONS, false),
      false,
      '0 = only when suggested',
    );
  });

  test('the deadline and what is left', () => {
    const state = {
      ...fresh({ ...DEFAULT_LIMITS, maxDurationMinutes: 1, maxTotalTokens: 100 }),
      modelCalls: 30,
      usage: { promptTokens: 90, completionTokens: 30, totalTokens: 120 },
    };
    assert.equal(msUntilDeadline(state, 1_000), 60_000);
    assert.equal(msUntilDeadline(state, 1_000_000), 1, 'at least 1 ms');
    assert.deepEqual(remainingBudgets(state, 31_000), {
      modelCalls: 70,
      durationMs: 30_000,
      contextTokens: 110_000,
      totalTokens: 0,
    });
    assert.equal('totalTokens' in remainingBudgets(fresh(), 0), false, 'no total-token budget, nothing left to report');
  });
});

describe('state changes', () => {
  test('opening, counting calls, resuming', () => {
    const opened = openedRunState(fresh(), {
      conversation: 'sha256:open',
      tools: [],
      modelActivity: { startToCloseSeconds: 600, heartbeatSeconds: 60, maxAttempts: 12 },
      model: 'm',
      contextTokens: 250,
    });
    assert.equal(opened.conversation, 'sha256:open');
    assert.equal(opened.contextTokens, 250);
    assert.equal(opened.setup?.model, 'm');
    const counted = countModelCall(countModelCall(opened));
    assert.deepEqual([counted.modelCalls, counted.modelCallsThisRun], [2, 2]);
    const resumed = resumedRunState(counted);
    assert.deepEqual([resumed.modelCalls, resumed.modelCallsThisRun], [2, 0]);
  });

  test('a model reply: conversation, usage summed, nothing pending; calibration only when the marker says so and there is an estimate', () => {
    const state = setPending(
      { ...fresh(), usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
      [{ role: 'user', parts: [{ text: 'x' }] }],
      30,
      ['c'],
    );
    assert.equal(hasPromptEstimate(reply({ estimatedPromptTokens: 200 })), true, 'with an estimate the marker decides');
    const applied = applyModelReply(state, reply({ estimatedPromptTokens: 200 }), true);
    assert.equal(applied.conversation, 'sha256:after');
    assert.deepEqual(applied.usage, { promptTokens: 310, completionTokens: 25, totalTokens: 335 });
    assert.deepEqual([applied.pending, applied.pendingTokens, applied.pendingCallIds], [[], 0, []]);
    assert.equal(applied.lastThought, 'thinking');
    assert.equal(applied.serverTokensPerEstimatedToken, 1.5);
    const unpatched = applyModelReply(state, reply({ estimatedPromptTokens: 200 }), false);
    assert.equal(unpatched.serverTokensPerEstimatedToken, 1, 'a run recorded before the marker keeps its estimates');
    assert.equal(hasPromptEstimate(reply()), false, 'no estimate: the marker is not asked');
    assert.deepEqual(applyModelReply(state, reply(), true), applyModelReply(state, reply(), false), 'nor read');
  });

  test('compression: applied and recorded, or nothing when it changed nothing', () => {
    const state = setPending(
      { ...fresh(), conversation: 'sha256:before', modelCalls: 4, serverTokensPerEstimatedToken: 2 },
      [{ role: 'user', parts: [{ text: 'obs' }] }],
      50,
      ['c'],
    );
    const compressed = applyCompression(state, {
      conversation: 'sha256:small',
      contextTokens: 400,
      stubbedObservations: 3,
      summarizedTurns: 1,
    });
    assert.equal(compressed.conversation, 'sha256:small');
    assert.equal(compressed.contextTokens, 800, 'in the server’s tokens');
    assert.deepEqual([compressed.pending, compressed.pendingTokens], [[], 0]);
    assert.deepEqual(compressed.details.compressions, [
      {
        atModelCall: 5,
        stubbedObservations: 3,
        summarizedTurns: 1,
        before: 'sha256:before',
        after: 'sha256:small',
        contextTokensAfter: 800,
      },
    ]);
    const idle = clearPending(state);
    assert.equal(
      applyCompression(idle, {
        conversation: 'sha256:before',
        contextTokens: 1,
        stubbedObservations: 0,
        summarizedTurns: 0,
      }),
      idle,
    );
  });

  test('a tool turn: observations in call order pending, with their calls; an open turn closed with a reason', () => {
    const turn: Turn = {
      calls: [call('a', 'x'), call('b', 'y')],
      results: new Map([['b', { parts: [{ ref: 'sha256:b' }], tokens: 90 }]]),
    };
    const answered = answerToolTurn(fresh(), turn, protocol);
    assert.deepEqual(answered.pendingCallIds, ['a', 'b']);
    assert.equal(answered.toolCallsAnswered, 2);
    assert.equal(answered.pendingTokens, 10 + 90 + 10);
    const closed = closeOpenTurn(
      appendPendingText(fresh(), 'note'),
      turn,
      'Not completed: the run was cancelled while this tool call was open.',
      protocol,
    );
    assert.match(text(closed), /note[\s\S]*Not completed: the run was cancelled[\s\S]*sha256:b/);
    assert.equal(closed.toolCallsAnswered, 2);
    const ending = closingState(fresh(), turn, 'answer', ['late message'], protocol);
    assert.match(
      text(ending),
      /Not run: the final answer was given in the same reply[\s\S]*\[Message from the user\] late message/,
    );
  });

  test('stuck detection over a turn: a warning, then stuck; unreadable calls left out only with the marker', () => {
    let state = fresh();
    for (let index = 0; index < 2; index += 1) {
      const calls = [call(`c${index}`, 'same')];
      assert.equal(hasUnreadableCall(calls), false, 'all readable: the marker is not asked');
      assert.deepEqual(observeRepeats(state, calls, true), observeRepeats(state, calls, false), 'nor read');
      state = observeRepeats(state, calls, false).state;
    }
    const warned = observeRepeats(state, [call('c2', 'same')], false);
    assert.equal(warned.stuck, false);
    assert.equal(warned.state.details.stuckNudges, 1);
    assert.match(text(warned.state), /same tool call three times in a row/);
    assert.equal(observeRepeats(warned.state, [call('c3', 'same')], false).stuck, true);

    const unreadable = { id: 'u', name: '', arguments: {}, problem: 'not valid JSON' };
    assert.equal(hasUnreadableCall([unreadable]), true);
    let watched = fresh();
    let unwatched = fresh();
    for (let index = 0; index < 3; index += 1) {
      watched = observeRepeats(watched, [unreadable], true).state;
      unwatched = observeRepeats(unwatched, [unreadable], false).state;
    }
    assert.equal(watched.details.stuckNudges, 0);
    assert.equal(unwatched.details.stuckNudges, 1, 'a run recorded before the marker counts them');
  });

  test('asking for the final answer: why recorded, open calls answered, injected messages, then the request', () => {
    const turn: Turn = { calls: [call('w', 'slow')], results: new Map() };
    const asked = askForFinalAnswer(fresh(), 'finish', turn, {
      protocol,
      finishReason: 'the user has enough',
      injected: ['one more thing'],
    });
    assert.equal(asked.details.finalAnswerPhase, 'finish_requested');
    assert.match(
      text(asked),
      /Not completed: the run was asked to finish now[\s\S]*\[Message from the user\] one more thing[\s\S]*finish now \(the user has enough\)[\s\S]*Stop calling tools now/,
    );
    assert.equal(asked.toolCallsAnswered, 1);
    assert.equal(
      askForFinalAnswer(fresh(), 'truncated_replies', undefined, { protocol, finishReason: '', injected: [] }).details
        .finalAnswerPhase,
      'token_limit',
    );
  });
});
