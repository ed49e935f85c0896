import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { toOpenAIMessage, toOpenAITool } from '../../activities/model/openai-messages';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { ChatMessage } from '../../src/core/messages';
import { TRUNCATED_REPLY_CALL_NOTE } from '../../src/core/protocols/truncated-reply';
import { readToolLog } from '../integration/support/tool-log';
import { RealServerEnvironment } from './support/real-server-environment';
import { lookup, realServerToolsEnvironment } from './support/real-server-tools';
import { activityOutcomes, modelCallOutputs } from './support/run-history';
import { transcriptProblems } from './support/transcript-checks';

// Native tool calling with a reply limit that cuts the tiny model's lookup call in the middle of
// its arguments: llama-server streams the call's name and the start of its arguments, then
// stops (finish_reason `length`). Those arguments are not JSON, and llama-server refuses a
// history that carries them (HTTP 500, retried until the run died `error` after minutes). The
// run must not run the cut call, must send the history back in a form the server accepts, and
// go on; the transcript keeps what the model really wrote.

const MAX_OUTPUT_TOKENS = 16;
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start();
  await environment.startWorker(realServerToolsEnvironment());
});

afterAll(async () => {
  await environment?.close();
});

/** POSTs a chat completion of `messages` (as the server would get them) and returns the status and body. */
async function chatCompletion(messages: unknown[]): Promise<{ status: number; body: string }> {
  const response = await fetch(`${environment.llama.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages,
      tools: new ToolRegistry([lookup]).specs().map(toOpenAITool),
      max_tokens: MAX_OUTPUT_TOKENS,
    }),
  });
  return { status: response.status, body: await response.text() };
}

test('a native tool call cut off in its arguments is not run, the history goes back valid, and the run answers', async () => {
  const { handle, result, messages } = await environment.run({
    question: QUESTION,
    protocol: 'native',
    tools: ['lookup'],
    model: { maxOutputTokens: MAX_OUTPUT_TOKENS },
    limits: { maxModelCalls: 6 },
  });

  assert.equal(result.termination, 'answer', `ended ${result.termination}: ${result.error ?? result.prediction}`);
  assert.equal(result.error, undefined);
  assert.equal(result.prediction, 'The answer is above.');
  assert.equal(result.details.truncatedReplies, 1);

  // The first reply was a lookup cut at the limit; the second, the answer, came back with no failed call in between.
  const calls = await modelCallOutputs(handle);
  assert.deepEqual(
    calls.map((call) => call.finishReason),
    ['length', 'stop'],
  );
  assert.equal(calls[0]?.usage.completionTokens, MAX_OUTPUT_TOKENS);
  const failures = (await activityOutcomes(handle)).filter((outcome) => outcome.failure !== undefined);
  assert.deepEqual(failures, [], 'no model call failed (the server never refused the history)');

  // The transcript keeps the raw, cut arguments; the call was answered without running it.
  assert.deepEqual(transcriptProblems(messages, 'native'), []);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'user', 'assistant'],
  );
  const cut = messages[2] as ChatMessage;
  assert.equal(cut.toolCalls?.length, 1);
  const raw = cut.toolCalls?.[0]?.arguments ?? '';
  assert.equal(cut.toolCalls?.[0]?.name, 'lookup');
  assert.ok(raw.length > 0, 'the server streamed the start of the arguments');
  assert.throws(() => JSON.parse(raw), SyntaxError, `the stored arguments ${JSON.stringify(raw)} are the cut text`);
  assert.equal(messages[3]?.toolCallId, cut.toolCalls?.[0]?.id);
  assert.equal(messages[3]?.content, TRUNCATED_REPLY_CALL_NOTE);
  assert.match(messages[4]?.content ?? '', /^Your reply was cut off: it reached the most tokens one reply may have/);
  assert.equal(messages[5]?.content, 'The answer is above.');
  assert.deepEqual(readToolLog(environment.toolLog, handle.workflowId), [], 'the cut call was not run');

  // Why it matters: llama-server refuses the history with the raw arguments, and accepts it as the worker sends it.
  const history = messages.slice(0, 5);
  const verbatim = history.map((message) =>
    message.toolCalls?.length
      ? {
          role: 'assistant',
          content: null,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        }
      : toOpenAIMessage(message),
  );
  const refused = await chatCompletion(verbatim);
  assert.equal(refused.status, 500, refused.body);
  assert.match(refused.body, /Failed to parse tool call arguments as JSON/);
  const accepted = await chatCompletion(history.map(toOpenAIMessage));
  assert.equal(accepted.status, 200, accepted.body);
});
