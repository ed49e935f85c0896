import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { toOpenAIMessage, toOpenAITool } from '../../activities/model/openai-messages';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { FailureTypes } from '../../src/core/failure-types';
import type { ChatMessage } from '../../src/core/messages';
import type { ProtocolName } from '../../src/core/protocols/protocol';
import { OpenAIOnlyProxy } from './support/openai-only-proxy';
import { RealServerEnvironment } from './support/real-server-environment';
import { lookup, lookupObservation, realServerToolsEnvironment } from './support/real-server-tools';
import { activityOutcomes } from './support/run-history';
import { transcriptProblems } from './support/transcript-checks';

// A conversation that outgrows llama-server's context: the lookup returns a long text, so the
// second model call's prompt is larger than the server's context and it answers HTTP 400
// exceed_context_size_error. The run must take that as "the context is full" and end
// token_limit through the final answer phase (the long observation withheld), not `error`.
// The run's own limit (maxContextTokens, 110,000 by default) is far off: only the server knows.
// The worker reaches llama-server through a proxy that passes only /v1/…, so the run cannot learn
// the window from /props at its start (as with a gateway): it reads it from the 400 (issue 16).
// test/real-server/context-window.test.ts is the run that learns it from /props.

const CONTEXT_SIZE = 1024;
const LOOKUP_CHARACTERS = 3_000;
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';

let environment: RealServerEnvironment;
let proxy: OpenAIOnlyProxy;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({ llamaServer: { contextSize: CONTEXT_SIZE } });
  proxy = await OpenAIOnlyProxy.start(environment.llama.origin);
  await environment.startWorker({
    ...realServerToolsEnvironment({ lookupCharacters: LOOKUP_CHARACTERS }),
    OPENAI_BASE_URL: proxy.baseUrl,
  });
});

afterAll(async () => {
  await environment?.close();
  await proxy?.close();
});

/** The tool-result message the second call would have sent: the whole observation. */
function fullObservation(protocol: ProtocolName, callId: string): ChatMessage {
  const text = lookupObservation('BYD', LOOKUP_CHARACTERS);
  return protocol === 'native'
    ? { role: 'tool', toolCallId: callId, content: text }
    : { role: 'user', content: `<tool_response>\n${text}\n</tool_response>` };
}

/** What llama-server counts for a request of these messages (with the lookup schema for native). */
async function serverTokens(messages: ChatMessage[], protocol: ProtocolName): Promise<number> {
  return environment.llama.promptTokens({
    messages: messages.map(toOpenAIMessage),
    ...(protocol === 'native' ? { tools: new ToolRegistry([lookup]).specs().map(toOpenAITool) } : {}),
  });
}

describe.each([
  { protocol: 'deep-research' as const, grammar: 'deep-research.gbnf' },
  { protocol: 'native' as const, grammar: undefined },
])('$protocol', ({ protocol, grammar }) => {
  test("a prompt past llama-server's context ends token_limit with the final answer call's answer, not error", async () => {
    await environment.llama.restart({ grammar });
    const { handle, result, messages } = await environment.run({
      question: QUESTION,
      protocol,
      tools: ['lookup'],
      limits: { maxModelCalls: 6 },
    });

    assert.equal(
      result.termination,
      'token_limit',
      `ended ${result.termination}: ${result.error ?? result.prediction}`,
    );
    assert.equal(result.error, undefined);
    assert.equal(result.details.finalAnswerPhase, 'token_limit');
    assert.equal(result.prediction, 'The answer is above.');
    assert.equal(result.toolCalls, 1);
    // The window was asked for and not said; the refusal named it.
    assert.ok(proxy.refused.includes('GET /props'), proxy.refused.join(', '));
    assert.deepEqual(result.details.contextWindow, {
      tokens: CONTEXT_SIZE,
      source: "the server's context-length error",
      promptBudget: CONTEXT_SIZE - 256 - 32,
    });

    // The second call was refused once by the server as a context overflow (not retried), then the final answer call answered.
    const modelCalls = (await activityOutcomes(handle)).filter((outcome) => outcome.activity === 'callModel');
    assert.deepEqual(
      modelCalls.map((outcome) => (outcome.failure === undefined ? 'completed' : outcome.failureType)),
      ['completed', FailureTypes.modelContextLengthExceeded, 'completed'],
    );
    assert.match(
      modelCalls[1]?.failure ?? '',
      new RegExp(`exceeds the available context size \\(${CONTEXT_SIZE} tokens\\)`),
    );
    assert.equal(result.iterations, 3);

    // What the model saw at the end: its lookup, the observation withheld, the final answer request, its answer.
    assert.deepEqual(transcriptProblems(messages, protocol), []);
    const call = messages[2] as ChatMessage;
    const callId = call.toolCalls?.[0]?.id ?? '';
    assert.equal(messages.length, protocol === 'native' ? 6 : 5);
    const observation = messages[3] as ChatMessage;
    assert.match(observation.content, /\[Output withheld: the context reached its limit/);
    assert.doesNotMatch(observation.content, /In 2019 BYD sold/);
    assert.match(messages.at(-2)?.content ?? '', /You have reached the maximum context length you can handle\./);
    assert.equal(messages.at(-1)?.role, 'assistant');
    assert.match(messages.at(-1)?.content ?? '', /The answer is above\./);

    // The server's own counts: the whole observation does not fit its context; what the final call sent does.
    const overflowing = await serverTokens([...messages.slice(0, 3), fullObservation(protocol, callId)], protocol);
    assert.ok(overflowing > CONTEXT_SIZE, `the refused prompt is ${overflowing} tokens`);
    const finalPrompt = await serverTokens(messages.slice(0, -1), protocol);
    assert.ok(finalPrompt < CONTEXT_SIZE, `the final answer prompt is ${finalPrompt} tokens`);
    // Usage counts the two replies the server gave, not the refused request.
    const firstPrompt = await serverTokens(messages.slice(0, 2), protocol);
    assert.equal(result.usage.promptTokens, firstPrompt + finalPrompt);

    const description = await handle.describe();
    assert.equal(description.status.name, 'COMPLETED');
    assert.equal(
      description.typedSearchAttributes.getAll().find((pair) => pair.key.name === 'ReactTermination')?.value,
      'token_limit',
    );
  });
});
