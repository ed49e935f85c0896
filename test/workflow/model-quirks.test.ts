import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { countConversationTokens, createTiktokenCounter } from '../../activities/token-counter';
import type { ProtocolName } from '../../src/core/protocols';
import type { ScriptedReply } from '../fakes/scripted-model-server';
import { answer, toolCall } from '../integration/support/scenarios';
import { type ModelRequest, WorkflowEnvironment } from './support/workflow-environment';

/**
 * What real model servers do that a scripted happy path does not, as the loop sees it: replies
 * cut off at the output token limit, replies the protocol cannot read, and tokenizers that count
 * more than our o200k estimate. (In the integration tier until issue 29; docs/testing.md lists
 * where each test went.)
 */
let environment: WorkflowEnvironment;

beforeAll(async () => {
  environment = await WorkflowEnvironment.start();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

const lastMessage = (request: ModelRequest | undefined) => String(request?.messages.at(-1)?.content ?? '');
const asksForFinalAnswer = (request: ModelRequest) =>
  /Stop calling tools now|Do not (call|use) any more tools/.test(lastMessage(request));

const COMPLETE = 'BYD sold more cars than Tesla in 2024, by about 2.48 million.';
const CUT = 'BYD sold more cars th';

/** A reply cut off at the output token limit, and the complete one, in each protocol's format. */
const formats: Record<ProtocolName, { cut: ScriptedReply; complete: ScriptedReply }> = {
  'deep-research': {
    cut: { content: `<think>Enough.</think>\n<answer>${CUT}`, finishReason: 'length' },
    complete: answer(COMPLETE),
  },
  native: { cut: { content: CUT, finishReason: 'length' }, complete: { content: COMPLETE } },
  classic: {
    cut: { content: `Thought: Enough.\nFinal Answer: ${CUT}`, finishReason: 'length' },
    complete: { content: `Thought: Enough.\nFinal Answer: ${COMPLETE}` },
  },
};

describe('a reply cut off at the output token limit', () => {
  for (const protocol of ['deep-research', 'native', 'classic'] as const) {
    test(`${protocol}: is not accepted as the answer; the model is asked for a shorter reply`, async () => {
      const { result, requests } = await environment.run(
        `cut-${protocol}`,
        [formats[protocol].cut, formats[protocol].complete],
        { protocol },
      );
      assert.equal(result.prediction, COMPLETE);
      assert.equal(result.termination, 'answer');
      assert.equal(result.iterations, 2, 'the cut-off reply counts as a model call');
      assert.match(lastMessage(requests[1]), /cut off/);
      assert.match(lastMessage(requests[1]), /shorter/);
      assert.equal(result.details.truncatedReplies, 1);
    }, 60_000);
  }

  test('deep-research: an <answer> never closed is cut off even when the server said stop', async () => {
    const { result, requests } = await environment.run('unclosed-answer', [
      { content: `<answer>${CUT}` },
      answer(COMPLETE),
    ]);
    assert.equal(result.prediction, COMPLETE);
    assert.match(lastMessage(requests[1]), /<answer> was not closed/);
  }, 60_000);

  test('native: tool calls in a cut-off reply are answered, not run', async () => {
    const { result, messages } = await environment.run(
      'cut-native-call',
      [
        {
          content: '',
          toolCalls: [{ id: 'call_a', name: 'lookup', arguments: '{"query": "BYD"}' }],
          finishReason: 'length',
        },
        { content: COMPLETE },
      ],
      { protocol: 'native' },
    );
    assert.equal(result.prediction, COMPLETE);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'user', 'assistant'],
    );
    assert.equal(messages[3]?.toolCallId, 'call_a');
    assert.match(messages[3]?.content ?? '', /^Not run: the reply was cut off/);
  }, 60_000);

  test('a model that always overflows: the run ends token_limit through the final answer, whose cut-off text is kept and marked', async () => {
    const { result, requests } = await environment.run('always-cut', () => formats['deep-research'].cut);
    assert.equal(result.termination, 'token_limit');
    assert.equal(result.details.replyLimit, 'maxTruncatedReplies');
    assert.equal(result.details.finalAnswerPhase, 'token_limit');
    // Three cut-off replies in a row (loop.maxTruncatedReplies), then the final answer and its one retry.
    assert.equal(result.iterations, 5);
    assert.equal(requests.length, 5);
    assert.ok(asksForFinalAnswer(requests[3] as ModelRequest), 'the fourth call asks for the final answer');
    assert.match(lastMessage(requests[4]), /answer was cut off/);
    assert.equal(result.prediction, `${CUT} [cut off: the reply reached the output token limit]`);
    assert.equal(result.details.truncatedAnswer, true);
  }, 60_000);

  test('a final answer cut off is asked for once more, shorter', async () => {
    const { result, requests } = await environment.run(
      'final-cut-then-complete',
      (turn) =>
        turn === 1
          ? toolCall('lookup', { query: 'BYD' })
          : turn === 2
            ? formats['deep-research'].cut
            : answer(COMPLETE),
      {
        limits: { maxModelCalls: 1 },
      },
    );
    assert.equal(result.termination, 'max_calls');
    assert.equal(result.prediction, COMPLETE);
    assert.equal(result.iterations, 3);
    assert.match(lastMessage(requests[2]), /answer was cut off/);
    assert.equal(result.details.truncatedAnswer, undefined);
  }, 60_000);
});

describe('replies the protocol cannot read', () => {
  const unreadableCall: ScriptedReply = {
    content: '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>',
  };

  test('get the format correction and are not "the same call" for stuck detection', async () => {
    const { result, requests } = await environment.run('unreadable-calls', [
      unreadableCall,
      unreadableCall,
      unreadableCall,
      unreadableCall,
      answer(COMPLETE),
    ]);
    assert.equal(result.termination, 'answer');
    assert.equal(result.prediction, COMPLETE);
    assert.equal(result.details.stuckNudges, 0);
    assert.equal(result.details.malformedReplies, 4);
    for (const request of requests.slice(1)) assert.match(lastMessage(request), /the tool call is not valid JSON/);
  }, 60_000);

  test('a model that never writes the format ends error through the final answer phase after loop.maxMalformedReplies', async () => {
    const { result, requests } = await environment.run(
      'never-the-format',
      (turn, request) =>
        asksForFinalAnswer(request) ? answer('best effort: BYD') : { content: 'I would rather chat.' },
      {
        limits: { maxModelCalls: 20 },
      },
    );
    assert.equal(result.termination, 'error');
    assert.match(result.error ?? '', /5 replies in a row could not be read/);
    assert.equal(result.details.replyLimit, 'maxMalformedReplies');
    assert.equal(result.prediction, 'best effort: BYD');
    assert.equal(result.iterations, 6, 'five unreadable replies, then the final answer');
    assert.equal(requests.length, 6);
  }, 60_000);
});

describe('a model whose tokenizer counts more than our estimate', () => {
  const counter = createTiktokenCounter();
  const estimate = (request: ModelRequest) =>
    countConversationTokens(
      request.messages.map((message) => ({
        role: 'user',
        content: typeof message.content === 'string' ? message.content : '',
      })),
      counter,
    );

  test('compresses once, not on every call: estimates are calibrated with the ratio the server reported', async () => {
    const ratio = 1.5;
    const longThought = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const { result, requests } = await environment.run(
      'calibrated',
      (turn, request) => {
        if (request.purpose === 'summary') return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024; Tesla 1.79M.' };
        const call = request.modelCall ?? turn;
        const reply =
          call === 1
            ? toolCall('lookup', { query: 'BYD' }, longThought)
            : call <= 9
              ? toolCall('lookup', { query: `step ${call}` })
              : answer(COMPLETE);
        return {
          ...reply,
          promptTokens: Math.round(ratio * estimate(request)),
          completionTokens: Math.round(ratio * counter.count(reply.content ?? '')),
        };
      },
      {
        limits: { maxContextTokens: 8_000 },
        loop: { compressAtFraction: 0.5, keepRecentTurns: 1, stuckDetection: false },
      },
    );
    assert.equal(result.termination, 'answer');
    assert.ok(
      requests.some((request) => request.purpose === 'summary'),
      'old turns were folded into a summary',
    );
    assert.equal(
      result.details.compressions.length,
      1,
      `compressed at calls ${result.details.compressions.map((compression) => compression.atModelCall).join(', ')}`,
    );
    for (const request of requests.filter((candidate) => candidate.purpose !== 'summary')) {
      assert.ok(estimate(request) * ratio <= 8_000, "every prompt fits the context budget in the server's tokens");
    }
  }, 90_000);
});
