import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { materialiseResult } from '../../src/cli/materialise-result';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { modelCallOutputs } from './support/run-history';
import { transcriptProblems } from './support/transcript-checks';

// The thinking model (tiny-thinking: a Qwen3-style template whose generation prompt opens
// <think>) served with --reasoning-format deepseek: llama-server streams the thinking in
// `delta.reasoning_content` and only the rest in `content`. The thinking must not be lost: it is
// each turn's thought (what history, `follow` and `status` show), it is kept on the stored reply,
// and the DeepResearch-shaped result writes it back as the `<think>` part.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const REASONING = 'Let me check';

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({
    llamaServer: { model: 'tiny-thinking', reasoningFormat: 'deepseek' },
  });
  await environment.startWorker(realServerToolsEnvironment());
});

afterAll(async () => {
  await environment?.close();
});

describe.each([
  {
    protocol: 'deep-research' as const,
    grammar: 'deep-research-thinking.gbnf',
    replies: [
      '<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD"}}\n</tool_call>',
      '<answer>The answer is above.</answer>',
    ],
  },
  { protocol: 'native' as const, grammar: undefined, replies: ['', 'The answer is above.'] },
])('$protocol', ({ protocol, grammar, replies }) => {
  test('the thinking streamed apart is the thought, stays on the stored reply, and is the <think> part of the result', async () => {
    await environment.llama.restart({ grammar });
    const { handle, result, messages } = await environment.run({
      question: QUESTION,
      protocol,
      tools: ['lookup'],
      limits: { maxModelCalls: 6 },
    });
    assert.equal(result.termination, 'answer', `ended ${result.termination}: ${result.error ?? result.prediction}`);
    assert.equal(result.prediction, 'The answer is above.');
    assert.equal(result.toolCalls, 1);

    // The parsed turns (in history, as follow and the Web UI show them) carry the reasoning as their thought.
    const calls = await modelCallOutputs(handle);
    assert.deepEqual(
      calls.map((call) => call.turn.thought),
      [REASONING, REASONING],
    );

    // The stored replies: the reasoning apart from the content, as the server sent them.
    assert.deepEqual(transcriptProblems(messages, protocol), []);
    const assistants = messages.filter((message) => message.role === 'assistant');
    assert.deepEqual(
      assistants.map((message) => [message.reasoning, message.content]),
      replies.map((content) => [REASONING, content]),
    );
    if (protocol === 'native') assert.equal(assistants[0]?.toolCalls?.[0]?.name, 'lookup');

    // The DeepResearch-shaped result (what `react-agent result` writes): the reasoning as the <think> part.
    const materialised = await materialiseResult(environment.store, result);
    assert.equal(materialised.messages.length, messages.length);
    assert.deepEqual(
      materialised.messages.filter((message) => message.role === 'assistant').map((message) => message.content),
      replies.map((content) => `<think>${REASONING}</think>\n${content}`),
    );
    assert.deepEqual(
      materialised.messages.filter((message) => message.role !== 'assistant').map((message) => message.content),
      messages.filter((message) => message.role !== 'assistant').map((message) => message.content),
      'the other messages are as stored',
    );
  });
});

test('a reply cut off while thinking keeps what it thought, and is not taken for an empty reply', async () => {
  await environment.llama.restart({ grammar: 'deep-research-thinking.gbnf' });
  const { handle, result, messages } = await environment.run({
    question: QUESTION,
    tools: ['lookup'],
    model: { maxOutputTokens: 2 },
    limits: { maxModelCalls: 6 },
    loop: { maxTruncatedReplies: 1 },
  });

  const calls = await modelCallOutputs(handle);
  assert.ok(calls.length >= 1);
  assert.ok(calls.every((call) => call.finishReason === 'length'));
  const first = messages.find((message) => message.role === 'assistant');
  assert.equal(first?.content, '');
  assert.ok(
    (first?.reasoning ?? '').length > 0 && REASONING.startsWith(first?.reasoning ?? ''),
    `stored reasoning ${JSON.stringify(first?.reasoning)}`,
  );
  assert.equal(calls[0]?.turn.thought, first?.reasoning);
  assert.match(calls[0]?.assistant.preview ?? '', /^\(reasoning\) /);
  // Cut off, not empty: the run asks for a shorter reply (here: ends token_limit at once), never "Your reply was empty".
  assert.equal(result.termination, 'token_limit');
  assert.equal(result.details.replyLimit, 'maxTruncatedReplies');
  assert.ok(messages.every((message) => !message.content.includes('Your reply was empty')));
});
