import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

async function run(label: string, replies: Parameters<Scenarios['add']>[1], input: Partial<Parameters<AgentEnvironment['startRun']>[0]> = {}) {
  const workflowId = scenarios.add(runId(label), replies);
  const handle = await environment.startRun({ question: `Question of ${label}?`, ...input }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  const messages = await environment.transcript(result);
  return { handle, result, messages, requests: environment.requestsOf(workflowId) };
}

test('a multi-step run reaches an answer and its transcript follows the protocol exactly', async () => {
  const { handle, result, messages, requests } = await run(
    'answer',
    [toolCall('lookup', { query: 'BYD 2024 sales' }), toolCall('lookup', { query: 'Tesla 2024 deliveries' }), answer('BYD sold about 2.48 million more vehicles than Tesla in 2024.')],
    { answer: 'BYD, by about 2.5 million' },
  );

  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD sold about 2.48 million more vehicles than Tesla in 2024.');
  assert.equal(result.answer, 'BYD, by about 2.5 million');
  assert.equal(result.iterations, 3);
  assert.equal(result.toolCalls, 2);
  assert.ok(result.usage.totalTokens > 0);

  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
  );
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages[0]?.content ?? '', /Current date: \d{4}-\d{2}-\d{2}/);
  assert.match(messages[0]?.content ?? '', /"name":"lookup"/);
  assert.equal(messages[1]?.content, 'Question of answer?');
  assert.match(messages[3]?.content ?? '', /^<tool_response>\nFacts about BYD 2024 sales: .*\n<\/tool_response>$/s);
  assert.match(messages[6]?.content ?? '', /<answer>BYD sold about/);

  // Each model call saw exactly the stored conversation up to that point, with the protocol's stop sequences.
  assert.equal(requests.length, 3);
  requests.forEach((request, index) => {
    assert.deepEqual(request.body.stop, ['\n<tool_response>', '<tool_response>']);
    assert.equal(request.modelCall, index + 1);
    assert.deepEqual(
      request.messages.map((message) => message.content),
      messages.slice(0, 2 + index * 2).map((message) => message.content),
    );
  });

  const description = await handle.describe();
  const attributes = Object.fromEntries(description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]));
  assert.equal(attributes.ReactTermination, 'answer');
  assert.equal(attributes.ReactIterations, 3);
});

test('malformed tool calls and unknown tools become observations and the run continues', async () => {
  const { result, messages } = await run('malformed', [
    { content: '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>' },
    toolCall('teleport', { where: 'moon' }),
    { content: '<tool_call>{"arguments": {"query": "x"}}</tool_call>' },
    toolCall('lookup', { wrong: 1 }),
    { content: 'I am not following the format at all.' },
    answer('done'),
  ]);
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 6);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages[3]?.content ?? '', /<tool_response>\nError: the tool call is not valid JSON/);
  assert.match(messages[5]?.content ?? '', /there is no tool named "teleport"\. Available tools: .*lookup/);
  assert.match(messages[7]?.content ?? '', /has no "name"/);
  assert.match(messages[9]?.content ?? '', /invalid arguments for tool "lookup": missing required argument "query"; unknown argument "wrong"/);
  assert.match(messages[11]?.content ?? '', /neither a <tool_call> nor an <answer>/);
});

test('the run ends max_calls when the model never answers: one last tool-less call, every tool call answered', async () => {
  const { result, messages, requests } = await run('max-calls', (turn) => toolCall('lookup', { query: `step ${turn}` }), { limits: { maxModelCalls: 3 } });
  assert.equal(result.termination, 'max_calls');
  assert.equal(result.iterations, 4, 'three calls and the final answer call');
  assert.equal(requests.length, 4);
  assert.equal(result.details.finalAnswerPhase, 'max_calls');
  assert.match(String(requests[3]?.messages.at(-1)?.content), /<tool_response>\nFacts about step 3[\s\S]*You have used all the model calls[\s\S]*Stop calling tools now/);
  assert.equal(result.prediction, 'No answer found: the model-call budget ran out.');
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages.at(-1)?.content ?? '', /<tool_response>\nNot run: the run ended \(max_calls\)/, 'the call in the final reply is answered, not run');
});

test('the final answer phase can be turned off: max_calls then ends at once', async () => {
  const { result, requests, messages } = await run('max-calls-no-final', (turn) => toolCall('lookup', { query: `step ${turn}` }), {
    limits: { maxModelCalls: 2 },
    loop: { finalAnswerPhase: false },
  });
  assert.equal(result.termination, 'max_calls');
  assert.equal(requests.length, 2);
  assert.deepEqual(protocolProblems(messages), []);
});

test('a context past the token budget gets one last call that asks for the final answer', async () => {
  const { result, messages, requests } = await run(
    'token-limit',
    (turn, request) =>
      request.messages.at(-1)?.content?.toString().includes('maximum context length')
        ? answer('best guess: BYD')
        : { ...toolCall('lookup', { query: `step ${turn}` }), promptTokens: 900 * turn, completionTokens: 50 },
    { limits: { maxContextTokens: 2_000 }, loop: { compressAtFraction: 0 } },
  );
  assert.equal(result.termination, 'token_limit');
  assert.equal(result.prediction, 'best guess: BYD');
  assert.deepEqual(protocolProblems(messages), []);
  const finalRequest = requests.at(-1);
  assert.match(String(finalRequest?.messages.at(-1)?.content), /<tool_response>\n\[Output withheld: the context reached its limit of 2,000 tokens/);
  assert.match(String(finalRequest?.messages.at(-1)?.content), /Stop calling tools now/);
});

test('a context-length error from the model server leads to the final answer, not a failed run', async () => {
  const { result, requests } = await run('context-400', (turn, request) =>
    String(request.messages.at(-1)?.content).includes('Stop calling tools now')
      ? answer('short answer')
      : turn === 1
        ? toolCall('lookup', { query: 'a' })
        : { status: 400, errorCode: 'context_length_exceeded', errorMessage: "This model's maximum context length is 8192 tokens." },
  );
  assert.equal(result.termination, 'token_limit');
  assert.equal(result.prediction, 'short answer');
  assert.equal(requests.filter((request) => request.status === 400).length, 1, 'a context-length error is not retried');
});

test('a rejected API key ends the run with error, naming the setting, without retrying', async () => {
  const { result, requests } = await run('unauthorized', [{ status: 401, errorMessage: 'Incorrect API key provided' }]);
  assert.equal(result.termination, 'error');
  assert.match(result.error ?? '', /OPENAI_API_KEY/);
  assert.doesNotMatch(JSON.stringify(result), /sk-test-secret-key/);
  assert.equal(requests.length, 1);
});

test('server errors and rate limits are retried by Temporal, honouring retry-after', async () => {
  const { result, requests } = await run('retry', (turn, request) => {
    const attempt = environment.requestsOf(request.workflowId as string).length;
    if (attempt === 1) return { status: 503, errorMessage: 'overloaded' };
    if (attempt === 2) return { status: 429, errorMessage: 'slow down', headers: { 'retry-after': '2' } };
    return answer('after retries');
  });
  assert.equal(result.termination, 'answer');
  assert.equal(requests.length, 3);
  const waited = (requests[2]?.receivedAt ?? 0) - (requests[1]?.receivedAt ?? 0);
  assert.ok(waited >= 1_900, `waited ${waited} ms after a 429 with retry-after: 2`);
});

test('a tool that keeps failing becomes an observation naming the error', async () => {
  const { result, messages } = await run('broken-tool', [toolCall('broken', {}), answer('gave up on it')]);
  assert.equal(result.termination, 'answer');
  assert.match(messages[3]?.content ?? '', /Error: the tool "broken" failed: the backend answered 503/);
});

test('a tool that hangs is cut by its timeout and the run goes on', async () => {
  const { result, messages } = await run('hanging-tool', [toolCall('hang', {}), answer('moved on')]);
  assert.equal(result.termination, 'answer');
  assert.match(messages[3]?.content ?? '', /Error: the tool "hang" failed: .*(timed out|timeout|StartToClose)/i);
  assert.ok(result.durationMs < 20_000, `took ${result.durationMs} ms`);
});

test('a question over 20,000 characters is refused before any model call', async () => {
  const workflowId = scenarios.add(runId('oversized'), [answer('never')]);
  const handle = await environment.startRun({ question: 'x'.repeat(20_001) }, workflowId);
  await assert.rejects(handle.result(), (error: Error) => /question is 20001 characters; the most is 20000/.test(String((error as { cause?: Error }).cause?.message)));
  assert.equal(environment.requestsOf(workflowId).length, 0);
});

test('a huge tool output is truncated for the model with a note and kept whole in the store', async () => {
  const { result, messages } = await run('big-output', [toolCall('big_output', { characters: 5_000_000 }), answer('ok')], { limits: { maxObservationCharacters: 10_000 } });
  assert.equal(result.termination, 'answer');
  const observation = messages[3]?.content ?? '';
  assert.ok(observation.length < 11_000, `observation is ${observation.length} characters`);
  const reference = /kept in the transcript store as (sha256:[0-9a-f]{64})/.exec(observation)?.[1];
  assert.ok(reference, 'the note names the stored output');
  assert.equal((await environment.store.getText(reference)).length, 5_000_000);
});

test('the run ends timeout when the wall-time budget runs out during a tool call', async () => {
  const { result, messages } = await run('timeout', [toolCall('wait', { seconds: 60 })], { limits: { maxDurationMinutes: 0.05 } });
  assert.equal(result.termination, 'timeout');
  assert.ok(result.durationMs < 20_000, `took ${result.durationMs} ms`);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages.at(-1)?.content ?? '', /<tool_response>\nNot completed: the run reached its time limit/);
});

test('invalid input is rejected before any model call', async () => {
  const workflowId = scenarios.add(runId('invalid'), [answer('never')]);
  const handle = await environment.startRun({ question: '   ', limits: { maxModelCalls: -1 } }, workflowId);
  await assert.rejects(handle.result(), (error: Error) =>
    /question must not be blank.*limits\.maxModelCalls must be an integer from 1 to 10000, got -1/s.test(String((error as { cause?: Error }).cause?.message)),
  );
  assert.equal(environment.requestsOf(workflowId).length, 0);

  const unknownTools = scenarios.add(runId('unknown-tools'), [answer('never')]);
  const handle2 = await environment.startRun({ question: 'q', tools: ['lookup', 'nope'] }, unknownTools);
  await assert.rejects(handle2.result(), (error: Error) => /Unknown tool: nope\. This worker has: lookup, wait/.test(String((error as { cause?: Error }).cause?.message)));
  assert.equal(environment.requestsOf(unknownTools).length, 0);
});
