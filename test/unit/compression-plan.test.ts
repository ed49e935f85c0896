import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  foldedMessages,
  isStubbable,
  planCompression,
  questionAlone,
  readQuestion,
  STUB_MINIMUM_CHARACTERS,
  stubText,
  summaryDue,
  turnSpans,
  withFinalRequest,
  withSummary,
  type CompressionBudgets,
} from '../../src/core/compression-plan';
import type { ChatMessage } from '../../src/core/messages';
import { protocolByName } from '../../src/core/protocols';

// What a compression does, decided before anything is stored or summarised (src/core/compression-plan.ts).

const LONG = 'x'.repeat(STUB_MINIMUM_CHARACTERS);
const SYSTEM: ChatMessage = { role: 'system', content: 'You are a deep research assistant.' };
const QUESTION: ChatMessage = { role: 'user', content: 'Which company sold more cars in 2024?' };
const budgets = (overrides: Partial<CompressionBudgets> = {}): CompressionBudgets => ({
  keepRecentTurns: 1,
  targetTokens: 100,
  summarize: true,
  ...overrides,
});

/** A deep-research conversation: one turn per observation text, each a call and its response. */
function conversation(...observations: string[]): ChatMessage[] {
  return [
    SYSTEM,
    QUESTION,
    ...observations.flatMap((text, index): ChatMessage[] => [
      { role: 'assistant', content: `<tool_call>\n{"name": "lookup", "arguments": {"n": ${index}}}\n</tool_call>` },
      { role: 'user', content: `<tool_response>\n${text}\n</tool_response>` },
    ]),
  ];
}

describe('turns', () => {
  test('a turn is an assistant message and what follows it; the system message and question are not in one', () => {
    const messages: ChatMessage[] = [
      SYSTEM,
      QUESTION,
      { role: 'user', content: 'injected' },
      { role: 'assistant', content: 'a' },
      { role: 'tool', content: 'r1' },
      { role: 'tool', content: 'r2' },
      { role: 'assistant', content: 'b' },
    ];
    assert.deepEqual(turnSpans(messages), [
      { start: 3, end: 6 },
      { start: 6, end: 7 },
    ]);
    assert.deepEqual(turnSpans([SYSTEM, QUESTION]), []);
  });
});

describe('stubs', () => {
  test('a result is stubbed from 600 characters on, never a stub again', () => {
    assert.equal(isStubbable('x'.repeat(STUB_MINIMUM_CHARACTERS - 1)), false);
    assert.equal(isStubbable(LONG), true);
    const stub = stubText(`${LONG}y`, 'sha256:abc');
    assert.match(
      stub,
      /^\[Observation omitted to save context: 601 characters beginning "x+…?"\. The full text is in the transcript store as sha256:abc\.\]$/,
    );
    assert.equal(isStubbable(stub.padEnd(1_000, ' ')), false);
  });

  test('the long results of the turns before the last keepRecentTurns are stubbed; short ones and recent turns stay', () => {
    const messages = conversation(LONG, 'short', LONG, LONG);
    const plan = planCompression(messages, protocolByName('deep-research'), budgets({ keepRecentTurns: 1 }));
    assert.equal(plan.turns.length, 4);
    assert.equal(plan.oldTurns.length, 3);
    assert.deepEqual(plan.stubs, [
      { index: 3, results: [LONG], stubbed: [true] },
      { index: 7, results: [LONG], stubbed: [true] },
    ]);
    assert.equal(plan.stubbedResults, 2);
    assert.equal(plan.dropTurns, false);
  });

  test('one message of several results: each is decided on its own', () => {
    const messages: ChatMessage[] = [
      SYSTEM,
      QUESTION,
      { role: 'assistant', content: 'a' },
      { role: 'user', content: `Observation: short\nObservation: ${LONG}` },
    ];
    const plan = planCompression(messages, protocolByName('classic'), budgets({ keepRecentTurns: 0 }));
    assert.deepEqual(plan.stubs, [{ index: 3, results: ['short\n', LONG], stubbed: [false, true] }]);
    assert.equal(plan.stubbedResults, 1);
  });

  test('what is an observation is the protocol’s to say: a native run’s tool messages, not its user messages', () => {
    const messages: ChatMessage[] = [
      SYSTEM,
      QUESTION,
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'a', content: LONG },
      { role: 'user', content: `<tool_response>\n${LONG}\n</tool_response>` },
    ];
    assert.deepEqual(
      planCompression(messages, protocolByName('native'), budgets({ keepRecentTurns: 0 })).stubs.map(
        (stub) => stub.index,
      ),
      [3],
    );
    assert.deepEqual(
      planCompression(messages, protocolByName('deep-research'), budgets({ keepRecentTurns: 0 })).stubs.map(
        (stub) => stub.index,
      ),
      [4],
    );
  });

  test('with dropTurns nothing is stubbed: the turns go', () => {
    const plan = planCompression(
      conversation(LONG, LONG),
      protocolByName('deep-research'),
      budgets({ keepRecentTurns: 0, finalAnswer: { request: 'Answer.', dropTurns: true } }),
    );
    assert.deepEqual(plan.stubs, []);
    assert.equal(plan.dropTurns, true);
  });
});

describe('the summary', () => {
  const messages = conversation('one', 'two', 'three');
  const plan = planCompression(messages, protocolByName('deep-research'), budgets({ keepRecentTurns: 1 }));

  test('is due when allowed, there are old turns and the conversation as sent is over the target', () => {
    assert.equal(
      summaryDue(plan, budgets(), () => 101),
      true,
    );
    assert.equal(
      summaryDue(plan, budgets(), () => 100),
      false,
      'at the target is enough',
    );
    assert.equal(
      summaryDue(plan, budgets({ summarize: false }), () => 1_000),
      false,
    );
    assert.equal(
      summaryDue(plan, budgets({ summarize: false }), () => assert.fail('counted though no summary is allowed')),
      false,
    );
    const recentOnly = planCompression(messages, protocolByName('deep-research'), budgets({ keepRecentTurns: 3 }));
    assert.equal(
      summaryDue(recentOnly, budgets(), () => 1_000),
      false,
      'no old turns',
    );
    const dropped = planCompression(
      messages,
      protocolByName('deep-research'),
      budgets({ finalAnswer: { request: 'r', dropTurns: true } }),
    );
    assert.equal(
      summaryDue(dropped, budgets(), () => 1_000),
      false,
    );
  });

  test('folds in every message of the old turns', () => {
    assert.deepEqual(foldedMessages(plan, messages), messages.slice(2, 6));
  });

  test('is attached to the question, naming where the steps are; the recent turns follow', () => {
    const folded = withSummary(plan, messages, 'BYD leads.', 'sha256:before');
    assert.deepEqual(folded, [
      SYSTEM,
      {
        role: 'user',
        content: `${QUESTION.content}\n\n[Summary of the research so far, written to save context; the steps before it are in the transcript store as sha256:before:]\nBYD leads.`,
      },
      ...messages.slice(6),
    ]);
    assert.deepEqual(readQuestion(folded[1] as ChatMessage), {
      text: QUESTION.content,
      summary: 'BYD leads.',
      hasSummary: true,
    });
    const again = withSummary(
      plan,
      [SYSTEM, folded[1] as ChatMessage, ...messages.slice(2)],
      'BYD leads still.',
      'sha256:later',
    );
    assert.match(
      again[1]?.content ?? '',
      /^Which company sold more cars in 2024\?\n\n\[Summary[^\n]*sha256:later:\]\nBYD leads still\.$/,
      'one summary, replaced',
    );
  });

  test('a question without a summary reads as itself', () => {
    assert.deepEqual(readQuestion(QUESTION), { text: QUESTION.content, summary: '', hasSummary: false });
  });
});

describe('the question alone', () => {
  test('every turn and any summary left out, with a note naming where they are', () => {
    const messages = conversation('one');
    const plan = planCompression(
      messages,
      protocolByName('deep-research'),
      budgets({ finalAnswer: { request: 'r', dropTurns: true } }),
    );
    assert.deepEqual(questionAlone(plan, messages, 'sha256:all'), [
      SYSTEM,
      {
        role: 'user',
        content: `${QUESTION.content}\n\n[The research steps so far do not fit the model's context window; they are in the transcript store as sha256:all.]`,
      },
    ]);
  });

  test('no note when there was nothing to leave out', () => {
    const messages = [SYSTEM, QUESTION];
    const plan = planCompression(
      messages,
      protocolByName('native'),
      budgets({ finalAnswer: { request: 'r', dropTurns: true } }),
    );
    assert.deepEqual(questionAlone(plan, messages, 'sha256:all'), [SYSTEM, QUESTION]);
  });
});

describe('the final answer request', () => {
  test('joins a last user message, else is a user message of its own; absent, the conversation stays', () => {
    const endsWithUser = conversation('one');
    assert.equal(
      withFinalRequest(endsWithUser, { request: 'Answer now.' }).at(-1)?.content,
      '<tool_response>\none\n</tool_response>\n\nAnswer now.',
    );
    const endsWithTool: ChatMessage[] = [
      SYSTEM,
      QUESTION,
      { role: 'assistant', content: '' },
      { role: 'tool', content: 'r' },
    ];
    assert.deepEqual(withFinalRequest(endsWithTool, { request: 'Answer now.' }).at(-1), {
      role: 'user',
      content: 'Answer now.',
    });
    assert.deepEqual(withFinalRequest(endsWithTool, undefined), endsWithTool);
  });
});
