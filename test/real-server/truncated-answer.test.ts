import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import type { ProtocolName } from '../../src/core/protocols/protocol';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { modelCallOutputs } from './support/run-history';
import { transcriptProblems } from './support/transcript-checks';

// An answer longer than the most tokens a reply may have: llama-server stops it at max_tokens
// (finish_reason `length`) in the middle of the answer. The run must not take the cut text for
// the answer ("BYD sold more cars th"): each cut reply is answered with a request for a shorter
// one; when they keep being cut the run ends token_limit through the final answer phase, which
// asks once more and then keeps the partial answer marked `[cut off: …]`.
//
// The grammars let the tiny model look BYD up as usual (a short reply) but make every answer at
// least 300 characters, so only the answers are cut.

const MAX_OUTPUT_TOKENS = 80;
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const LONG_TEXT = '[A-Za-z0-9 ,.]{300,400}';

const GRAMMARS: Record<Exclude<ProtocolName, 'native'>, string> = {
  'deep-research': [
    'root      ::= "<think>" thought "</think>\\n" ( tool-call | answer )',
    'thought   ::= [A-Za-z0-9 ,.]{1,40}',
    'tool-call ::= "<tool_call>\\n{\\"name\\": \\"lookup\\", \\"arguments\\": {\\"query\\": \\"" query "\\"}}\\n</tool_call>"',
    'query     ::= [A-Za-z0-9 ]{1,10}',
    `answer    ::= "<answer>" ${LONG_TEXT} "</answer>"`,
  ].join('\n'),
  classic: [
    'root   ::= "Thought: " [A-Za-z0-9 ,.]{1,40} "\\n" ( action | final )',
    'action ::= "Action: lookup\\nAction Input: {\\"query\\": \\"" [A-Za-z0-9 ]{1,10} "\\"}"',
    `final  ::= "Final Answer: " ${LONG_TEXT}`,
  ].join('\n'),
};

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start();
  await environment.startWorker(realServerToolsEnvironment());
});

afterAll(async () => {
  await environment?.close();
});

describe.each(['deep-research', 'classic'] as const)('%s', (protocol) => {
  test('answers cut off at max_tokens are not accepted: asked again shorter, then token_limit with the partial answer marked', async () => {
    await environment.llama.restart({ grammar: GRAMMARS[protocol] });
    const { handle, result, messages } = await environment.run({
      question: QUESTION,
      protocol,
      tools: ['lookup'],
      model: { maxOutputTokens: MAX_OUTPUT_TOKENS },
      limits: { maxModelCalls: 12 },
    });

    const calls = await modelCallOutputs(handle);
    // The lookup fits in a reply; every answer after it was stopped by the server at the limit.
    assert.deepEqual(
      calls.map((call) => call.finishReason),
      ['stop', 'length', 'length', 'length', 'length', 'length'],
    );
    assert.ok(calls.slice(1).every((call) => call.usage.completionTokens === MAX_OUTPUT_TOKENS));
    assert.equal(result.toolCalls, 1);

    // Not an answer: token_limit (three cut replies in a row), the final answer asked for twice, then kept marked.
    assert.equal(result.termination, 'token_limit', `ended ${result.termination}: ${result.prediction}`);
    assert.equal(result.error, undefined);
    assert.equal(result.details.replyLimit, 'maxTruncatedReplies');
    assert.equal(result.details.finalAnswerPhase, 'token_limit');
    assert.equal(result.details.truncatedReplies, 5);
    assert.equal(result.details.truncatedAnswer, true);
    assert.ok(result.prediction.endsWith(' [cut off: the reply reached the output token limit]'), result.prediction);
    const partial = result.prediction.slice(0, -' [cut off: the reply reached the output token limit]'.length);
    assert.ok(partial.length > 0);
    assert.ok(
      (calls.at(-1)?.turn.answer ?? '').startsWith(partial),
      "the marked text is the last reply's partial answer",
    );

    // Each cut reply was answered with a request for a shorter one, then the final answer was asked for again.
    assert.deepEqual(transcriptProblems(messages, protocol), []);
    const userTexts = messages
      .slice(4)
      .filter((message) => message.role === 'user')
      .map((message) => message.content);
    assert.equal(userTexts.length, 4);
    for (const text of userTexts.slice(0, 2))
      assert.match(
        text,
        /Your reply was cut off: it reached the most tokens one reply may have before it was finished, and none of it was used\. Reply again, shorter/,
      );
    assert.match(userTexts[2] ?? '', /Your replies keep getting cut off/);
    assert.match(userTexts[3] ?? '', /Your answer was cut off[\s\S]*Write the final answer again, much shorter/);

    const description = await handle.describe();
    assert.equal(description.status.name, 'COMPLETED');
  });
});
