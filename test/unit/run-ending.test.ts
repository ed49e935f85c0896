import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import { checkAnswer } from '../../src/core/reply-steps';
import {
  afterStoreFailure,
  concludeRun,
  endingAfterFinalAnswer,
  endingAfterLoop,
  finalAnswerCause,
  requestStop,
  type Conclusion,
  type Ending,
  type EndingRecord,
  type FinalAnswerCalls,
  type StopRequest,
  withRecord,
} from '../../src/core/run-ending';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import { askForFinalAnswer, continuedRunState, initialRunState } from '../../src/core/run-transitions';
import { unansweredTurn } from '../../src/core/turns';

/**
 * How a run ends, without a server: the same steps the workflow takes after its loop
 * (workflows/research-agent.ts), on pure functions. Stop requests arrive in order; the loop's
 * own ending with what it carries (last answer, error), and the final answer phase (if the ending
 * goes through it) with what its call gave, decide the conclusion.
 */
interface Row {
  name: string;
  /** How the loop itself ended (`cancelled`: its scope was cancelled). */
  loop: Ending;
  /** Stop requests, in the order they arrived. */
  stops?: StopRequest[];
  finalAnswerPhase?: boolean;
  /** How the final answer phase's calls went (and what the last reply gave), when the ending goes through it. */
  finalCalls?: FinalAnswerCalls;
  /** What the run holds when its loop ends besides the loop's ending: the last answer the model gave in the loop, the error. */
  record?: EndingRecord;
  expected: Partial<Conclusion> | 'continue_as_new';
}

function conclude(row: Row): Conclusion | 'continue_as_new' {
  const stop = (row.stops ?? []).reduce<StopRequest | undefined>(
    (current, incoming) => requestStop(current, incoming),
    undefined,
  );
  const ending = endingAfterLoop(withRecord(row.loop, row.record ?? {}), stop);
  if (ending.kind === 'continue_as_new') return 'continue_as_new';
  let final = ending;
  if (finalAnswerCause(ending, row.finalAnswerPhase ?? true) !== undefined) {
    final = endingAfterFinalAnswer(ending, row.finalCalls ?? { kind: 'called' });
  } else {
    assert.equal(row.finalCalls, undefined, `${row.name}: no final answer phase, so no final calls`);
  }
  return concludeRun(final, DEFAULT_LIMITS);
}

const M =
  "The model's last 5 replies in a row could not be read in the deep-research protocol (no answer and no tool call it could parse). Try another protocol.";

const rows: Row[] = [
  {
    name: 'an answer',
    loop: { kind: 'answered', answer: { text: 'BYD' } },
    expected: { termination: 'answer', prediction: 'BYD' },
  },
  {
    name: 'an answer stands against a finish request of the same moment',
    loop: { kind: 'answered', answer: { text: 'BYD' } },
    stops: [{ kind: 'finish', reason: '' }],
    expected: { termination: 'answer', prediction: 'BYD' },
  },
  {
    name: 'a model error stands against a timeout of the same moment',
    loop: { kind: 'failed', message: 'bad key' },
    stops: [{ kind: 'timeout' }],
    expected: { termination: 'error', prediction: 'No answer: bad key', error: 'bad key' },
  },
  {
    name: 'a cancellation without a stop request',
    loop: { kind: 'cancelled' },
    expected: { termination: 'cancelled', prediction: 'No answer: the run was cancelled.' },
  },
  {
    name: 'the deadline: timeout, with the final answer',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'timeout' }],
    finalCalls: { kind: 'called', lastAnswer: { text: 'probably BYD' } },
    expected: { termination: 'timeout', prediction: 'probably BYD' },
  },
  {
    name: 'finish requested during a timeout: the timeout stands',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'timeout' }, { kind: 'finish', reason: 'enough' }],
    expected: { termination: 'timeout', prediction: 'No answer found after 150 minutes.' },
  },
  {
    name: 'the deadline during a finish request: the finish stands, answered',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'finish', reason: 'enough' }, { kind: 'timeout' }],
    finalCalls: { kind: 'called', lastAnswer: { text: 'partial answer' } },
    expected: { termination: 'answer', prediction: 'partial answer' },
  },
  {
    name: 'a finish request the final answer call did not answer',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'finish', reason: '' }],
    expected: { termination: 'cancelled', prediction: 'No answer: the run was cancelled.' },
  },
  {
    name: 'a finish request goes to the final answer even with the phase off',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'finish', reason: '' }],
    finalAnswerPhase: false,
    finalCalls: { kind: 'called', lastAnswer: { text: 'now' } },
    expected: { termination: 'answer', prediction: 'now' },
  },
  {
    name: 'a budget end loses to a stop request of the same moment',
    loop: { kind: 'budget_ended', budget: 'stuck' },
    stops: [{ kind: 'timeout' }],
    expected: { termination: 'timeout' },
  },
  {
    name: 'cancel during the final answer call',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    finalCalls: { kind: 'cancelled' },
    expected: { termination: 'cancelled', prediction: 'No answer: the run was cancelled.' },
  },
  {
    name: 'cancel during the final answer call of a finish request',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'finish', reason: '' }],
    finalCalls: { kind: 'cancelled' },
    expected: { termination: 'cancelled' },
  },
  {
    name: 'cancel during the final answer call after malformed replies: their error stays',
    loop: { kind: 'budget_ended', budget: 'malformed_replies' },
    finalCalls: { kind: 'cancelled' },
    record: { error: M },
    expected: { termination: 'cancelled', error: M },
  },
  {
    name: 'token limit through the final answer',
    loop: { kind: 'budget_ended', budget: 'token_limit' },
    finalCalls: { kind: 'called', lastAnswer: { text: 'best guess' } },
    expected: { termination: 'token_limit', prediction: 'best guess' },
  },
  {
    name: 'truncated replies end token_limit',
    loop: { kind: 'budget_ended', budget: 'truncated_replies' },
    expected: { termination: 'token_limit', prediction: 'No answer found.' },
  },
  {
    name: 'malformed replies end error, the final answer kept',
    loop: { kind: 'budget_ended', budget: 'malformed_replies' },
    record: { error: M },
    finalCalls: { kind: 'called', lastAnswer: { text: 'best effort' } },
    expected: { termination: 'error', prediction: 'best effort', error: M },
  },
  {
    name: 'schema failure on the final answer: the budget stands, the answer is the prediction, the error says why',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    finalCalls: {
      kind: 'called',
      lastAnswer: { text: 'not json' },
      error: 'The answer did not match the answer schema after 3 attempts: $ is not valid JSON',
    },
    expected: {
      termination: 'max_calls',
      prediction: 'not json',
      error: 'The answer did not match the answer schema after 3 attempts: $ is not valid JSON',
    },
  },
  {
    name: 'schema failure in the loop ends error with the answer',
    loop: {
      kind: 'failed',
      message: 'The answer did not match the answer schema after 2 attempts: $ must be object',
      answer: 'not json',
    },
    expected: {
      termination: 'error',
      prediction: 'not json',
      error: 'The answer did not match the answer schema after 2 attempts: $ must be object',
    },
  },
  {
    name: 'a structured final answer after a budget end carries its parsed value',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    finalCalls: { kind: 'called', lastAnswer: { text: '{"winner":"BYD"}', parsed: { winner: 'BYD' } } },
    expected: { termination: 'max_calls', prediction: '{"winner":"BYD"}', parsedAnswer: { winner: 'BYD' } },
  },
  {
    name: 'model error after a budget ended: the budget stands, the error is the call failure',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    finalCalls: { kind: 'failed', message: 'the model server is down' },
    expected: {
      termination: 'max_calls',
      prediction: 'No answer found: the model-call budget ran out.',
      error: 'the model server is down',
    },
  },
  {
    name: 'model error after malformed replies ended the loop: both errors',
    loop: { kind: 'budget_ended', budget: 'malformed_replies' },
    finalCalls: { kind: 'failed', message: 'the model server is down' },
    record: { error: M },
    expected: { termination: 'error', error: `${M} The final answer call failed: the model server is down` },
  },
  {
    name: 'no final answer phase: max_calls at once',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    finalAnswerPhase: false,
    expected: { termination: 'max_calls', prediction: 'No answer found: the model-call budget ran out.' },
  },
  { name: 'continue-as-new', loop: { kind: 'continue_as_new' }, expected: 'continue_as_new' },
  {
    name: 'continue-as-new with a finish request pending: the finish wins',
    loop: { kind: 'continue_as_new' },
    stops: [{ kind: 'finish', reason: 'now' }],
    finalCalls: { kind: 'called', lastAnswer: { text: 'x' } },
    expected: { termination: 'answer' },
  },
  {
    name: 'an earlier answer the schema refused is the prediction of a later budget end',
    loop: { kind: 'budget_ended', budget: 'max_calls' },
    record: { lastAnswer: { text: 'not json yet' } },
    expected: { termination: 'max_calls', prediction: 'not json yet' },
  },
  {
    name: 'malformed replies and a timeout of the same moment: the timeout, their error kept',
    loop: { kind: 'budget_ended', budget: 'malformed_replies' },
    record: { error: M },
    stops: [{ kind: 'timeout' }],
    expected: { termination: 'timeout', prediction: 'No answer found after 150 minutes.', error: M },
  },
  {
    name: 'an answer the schema refused in the loop, then none from the final answer call: the refused one is the prediction',
    loop: { kind: 'cancelled' },
    stops: [{ kind: 'timeout' }],
    record: { lastAnswer: { text: 'not json yet' } },
    expected: { termination: 'timeout', prediction: 'not json yet' },
  },
  {
    name: "the final answer's schema failure replaces the loop's error",
    loop: { kind: 'budget_ended', budget: 'malformed_replies' },
    record: { error: M },
    finalCalls: {
      kind: 'called',
      lastAnswer: { text: 'not json' },
      error: 'The answer did not match the answer schema after 1 attempts: $ is not valid JSON',
    },
    expected: {
      termination: 'error',
      prediction: 'not json',
      error: 'The answer did not match the answer schema after 1 attempts: $ is not valid JSON',
    },
  },
  {
    name: 'an empty answer says there is none',
    loop: { kind: 'answered', answer: { text: '' } },
    expected: { termination: 'answer', prediction: 'No answer found.' },
  },
];

describe('ending precedence', () => {
  for (const row of rows) {
    test(row.name, () => {
      const concluded = conclude(row);
      if (row.expected === 'continue_as_new') {
        assert.equal(concluded, 'continue_as_new');
        return;
      }
      assert.notEqual(concluded, 'continue_as_new');
      const conclusion = concluded as Conclusion;
      for (const [field, value] of Object.entries(row.expected))
        assert.deepEqual(conclusion[field as keyof Conclusion], value, field);
      if (row.expected.error === undefined) assert.equal(conclusion.error, undefined, 'no error');
    });
  }
});

describe('pieces of the ending', () => {
  test('the first stop request stands', () => {
    assert.deepEqual(requestStop(undefined, { kind: 'timeout' }), { kind: 'timeout' });
    assert.deepEqual(requestStop({ kind: 'finish', reason: 'a' }, { kind: 'timeout' }), {
      kind: 'finish',
      reason: 'a',
    });
    assert.deepEqual(requestStop({ kind: 'timeout' }, { kind: 'finish', reason: 'b' }), { kind: 'timeout' });
  });

  test('a finish request carries its reason to the final answer phase', () => {
    assert.deepEqual(endingAfterLoop({ kind: 'cancelled' }, { kind: 'finish', reason: 'the user has enough' }), {
      kind: 'finish_requested',
      reason: 'the user has enough',
    });
    assert.equal(finalAnswerCause({ kind: 'finish_requested', reason: '' }, false), 'finish');
    assert.equal(finalAnswerCause({ kind: 'budget_ended', budget: 'stuck' }, true), 'stuck');
    assert.equal(finalAnswerCause({ kind: 'budget_ended', budget: 'stuck' }, false), undefined);
    assert.equal(finalAnswerCause({ kind: 'cancelled' }, true), undefined);
  });

  test('open calls: a stop keeps those the loop left open; the final answer phase answers them and leaves those of its last reply', () => {
    const left = unansweredTurn([{ id: 'c1', name: 'lookup', arguments: {} }]);
    const stopped = endingAfterLoop(withRecord({ kind: 'cancelled' }, { openTurn: left }), { kind: 'timeout' });
    assert.deepEqual(stopped, { kind: 'budget_ended', budget: 'timeout', openTurn: left });
    if (stopped.kind === 'continue_as_new') return;
    assert.deepEqual(endingAfterFinalAnswer(stopped, { kind: 'called' }), { kind: 'budget_ended', budget: 'timeout' });
    assert.deepEqual(endingAfterFinalAnswer(stopped, { kind: 'cancelled' }), { kind: 'cancelled' });
    assert.deepEqual(endingAfterFinalAnswer(stopped, { kind: 'failed', message: 'down' }), {
      kind: 'budget_ended',
      budget: 'timeout',
      error: 'down',
    });
    const made = unansweredTurn([{ id: 'c2', name: 'search', arguments: {} }]);
    assert.deepEqual(endingAfterFinalAnswer(stopped, { kind: 'called', openTurn: made }), {
      kind: 'budget_ended',
      budget: 'timeout',
      openTurn: made,
    });
  });

  test('what the run holds joins the ending; what the ending carries stands', () => {
    const answer = { kind: 'answered', answer: { text: 'BYD' }, lastAnswer: { text: 'BYD' } } as const;
    assert.deepEqual(withRecord(answer, { lastAnswer: { text: 'earlier' }, openTurn: undefined }), answer);
    assert.deepEqual(
      withRecord({ kind: 'budget_ended', budget: 'stuck' }, { lastAnswer: undefined, openTurn: undefined }),
      { kind: 'budget_ended', budget: 'stuck' },
    );
  });

  test('a store failure is added to the error', () => {
    const stored = afterStoreFailure({ termination: 'answer', prediction: 'BYD' }, 'disk full');
    assert.equal(stored.error, 'the last messages could not be stored: disk full');
    assert.equal(
      afterStoreFailure({ termination: 'error', prediction: 'x', error: 'bad key' }, 'disk full').error,
      'bad key; the last messages could not be stored: disk full',
    );
  });

  test('schema failure on the final answer: the check fails after the allowed attempts', () => {
    const state = { ...initialRunState('deep-research', DEFAULT_LIMITS, 0), answerAttempts: 2 };
    const checked = checkAnswer(state, 'not json', { type: 'object' }, 3);
    assert.equal(checked.check.kind, 'failed');
    assert.equal(checked.state.answerAttempts, 3);
    assert.deepEqual(checked.given, { text: 'not json' });
    const error = checked.check.kind === 'failed' ? { error: checked.check.message } : {};
    const conclusion = concludeRun(
      { kind: 'budget_ended', budget: 'max_calls', lastAnswer: checked.given, ...error },
      DEFAULT_LIMITS,
    );
    assert.equal(conclusion.termination, 'max_calls');
    assert.match(conclusion.error ?? '', /did not match the answer schema after 3 attempts/);
  });

  test('token limit with withheld observations: the final answer call gets notes instead of the last observations', () => {
    const opened = {
      ...initialRunState('deep-research', { ...DEFAULT_LIMITS, maxContextTokens: 2_000 }, 0),
      conversation: 'conv',
    };
    const state = {
      ...opened,
      pending: [{ role: 'user' as const, parts: [{ ref: 'sha256:big' }] }],
      pendingTokens: 1_500,
      pendingCallIds: ['call-3-0'],
    };
    const asked = askForFinalAnswer(state, 'token_limit', undefined, {
      protocol: deepResearchProtocol,
      finishReason: '',
      injected: [],
    });
    const text = JSON.stringify(asked.pending);
    assert.doesNotMatch(text, /sha256:big/);
    assert.match(text, /\[Output withheld: the context reached its limit of 2,000 tokens/);
    assert.match(text, /maximum context length[\s\S]*Stop calling tools now/);
    assert.ok(
      asked.pendingTokens < 200,
      `the withheld notes are not counted as the observations were (${asked.pendingTokens})`,
    );
    assert.equal(asked.details.finalAnswerPhase, 'token_limit');
    const kept = askForFinalAnswer(state, 'max_calls', undefined, {
      protocol: deepResearchProtocol,
      finishReason: '',
      injected: [],
    });
    assert.match(JSON.stringify(kept.pending), /sha256:big/, 'other budgets keep the observations');
  });

  test('continue-as-new with messages injected since the last call: they are pending for the next run', () => {
    const state = initialRunState('deep-research', DEFAULT_LIMITS, 0);
    const continued = continuedRunState(state, ['Focus on 2024.']);
    assert.equal(continued.details.continuedAsNew, 1);
    assert.match(JSON.stringify(continued.pending), /\[Message from the user\] Focus on 2024\./);
    assert.ok(continued.pendingTokens > 0);
  });
});
