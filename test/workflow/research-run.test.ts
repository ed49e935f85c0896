import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { protocolProblems } from '../integration/support/agent-environment';
import { answer, toolCall } from '../integration/support/scenarios';
import { WorkflowEnvironment } from './support/workflow-environment';

/**
 * A research run on the real workflows, in process (moved from test/integration/research-run.test.ts,
 * which keeps what needs the model server's HTTP: context-length 400s, a rejected key, retries of
 * 5xx and 429 with retry-after): the protocol's transcript, malformed calls, the budgets (calls,
 * tokens, time), failing and hanging tools, huge outputs and refused input.
 */
let environment: WorkflowEnvironment;

beforeAll(async () => {
  environment = await WorkflowEnvironment.start();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

test('a multi-step run reaches an answer and its transcript follows the protocol exactly', async () => {
  const { handle, result, messages, requests } = await environment.run(
    'answer',
    [
      toolCall('lookup', { query: 'BYD 2024 sales' }),
      toolCall('lookup', { query: 'Tesla 2024 deliveries' }),
      answer('BYD sold about 2.48 million more vehicles than Tesla in 2024.'),
    ],
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
    assert.deepEqual(request.stop, ['\n<tool_response>', '<tool_response>']);
    assert.equal(request.modelCall, index + 1);
    assert.deepEqual(
      request.messages.map((message) => message.content),
      messages.slice(0, 2 + index * 2).map((message) => message.content),
    );
  });

  const description = await handle.describe();
  const attributes = Object.fromEntries(
    description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
  );
  assert.equal(attributes.ReactTermination, 'answer');
  assert.equal(attributes.ReactIterations, 3);
});

test('malformed tool calls and unknown tools become observations and the run continues', async () => {
  const { result, messages } = await environment.run('malformed', [
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
  assert.match(
    messages[9]?.content ?? '',
    /invalid arguments for tool "lookup": missing required argument "query"; unknown argument "wrong"/,
  );
  assert.match(messages[11]?.content ?? '', /neither a <tool_call> nor an <answer>/);
});

test('the run ends max_calls when the model never answers: one last tool-less call, every tool call answered', async () => {
  const { result, messages, requests } = await environment.run(
    'max-calls',
    (turn) => toolCall('lookup', { query: `step ${turn}` }),
    { limits: { maxModelCalls: 3 } },
  );
  assert.equal(result.termination, 'max_calls');
  assert.equal(result.iterations, 4, 'three calls and the final answer call');
  assert.equal(requests.length, 4);
  assert.equal(result.details.finalAnswerPhase, 'max_calls');
  assert.match(
    String(requests[3]?.messages.at(-1)?.content),
    /<tool_response>\nFacts about step 3[\s\S]*You have used all the model calls[\s\S]*Stop calling tools now/,
  );
  assert.equal(result.prediction, 'No answer found: the model-call budget ran out.');
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(
    messages.at(-1)?.content ?? '',
    /<tool_response>\nNot run: the run ended \(max_calls\)/,
    'the call in the final reply is answered, not run',
  );
});

test('the final answer phase can be turned off: max_calls then ends at once', async () => {
  const { result, requests, messages } = await environment.run(
    'max-calls-no-final',
    (turn) => toolCall('lookup', { query: `step ${turn}` }),
    {
      limits: { maxModelCalls: 2 },
      loop: { finalAnswerPhase: false },
    },
  );
  assert.equal(result.termination, 'max_calls');
  assert.equal(requests.length, 2);
  assert.deepEqual(protocolProblems(messages), []);
});

test('a context past the token budget gets one last call that asks for the final answer', async () => {
  const { result, messages, requests } = await environment.run(
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
  assert.match(
    String(finalRequest?.messages.at(-1)?.content),
    /<tool_response>\n\[Output withheld: the context reached its limit of 2,000 tokens/,
  );
  assert.match(String(finalRequest?.messages.at(-1)?.content), /Stop calling tools now/);
});

test('a tool that keeps failing becomes an observation naming the error', async () => {
  const { result, messages } = await environment.run('broken-tool', [toolCall('broken', {}), answer('gave up on it')]);
  assert.equal(result.termination, 'answer');
  assert.match(messages[3]?.content ?? '', /Error: the tool "broken" failed: the backend answered 503/);
});

test('a tool that hangs is cut by its timeout and the run goes on', async () => {
  const { result, messages } = await environment.run('hanging-tool', [toolCall('hang', {}), answer('moved on')]);
  assert.equal(result.termination, 'answer');
  assert.match(messages[3]?.content ?? '', /Error: the tool "hang" failed: .*(timed out|timeout|StartToClose)/i);
  assert.ok(result.durationMs < 20_000, `took ${result.durationMs} ms`);
});

test('a question over 20,000 characters is refused before any model call', async () => {
  const { workflowId, handle } = await environment.start('oversized', [answer('never')], {
    question: 'x'.repeat(20_001),
  });
  await assert.rejects(handle.result(), (error: Error) =>
    /question is 20001 characters; the most is 20000/.test(String((error as { cause?: Error }).cause?.message)),
  );
  assert.equal(environment.requestsOf(workflowId).length, 0);
});

test('a huge tool output is truncated for the model with a note and kept whole in the store', async () => {
  const { result, messages } = await environment.run(
    'big-output',
    [toolCall('big_output', { characters: 5_000_000 }), answer('ok')],
    { limits: { maxObservationCharacters: 10_000 } },
  );
  assert.equal(result.termination, 'answer');
  const observation = messages[3]?.content ?? '';
  assert.ok(observation.length < 11_000, `observation is ${observation.length} characters`);
  const reference = /kept in the transcript store as (sha256:[0-9a-f]{64})/.exec(observation)?.[1];
  assert.ok(reference, 'the note names the stored output');
  assert.equal((await environment.store.getText(reference)).length, 5_000_000);
});

test('the run ends timeout when the wall-time budget runs out during a tool call', async () => {
  const { result, messages } = await environment.run('timeout', [toolCall('wait', { seconds: 60 })], {
    limits: { maxDurationMinutes: 0.05 },
  });
  assert.equal(result.termination, 'timeout');
  assert.ok(result.durationMs < 20_000, `took ${result.durationMs} ms`);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages.at(-1)?.content ?? '', /<tool_response>\nNot completed: the run reached its time limit/);
});

test('invalid input is rejected before any model call', async () => {
  const { workflowId, handle } = await environment.start('invalid', [answer('never')], {
    question: '   ',
    limits: { maxModelCalls: -1 },
  });
  await assert.rejects(handle.result(), (error: Error) =>
    /question must not be blank.*limits\.maxModelCalls must be an integer from 1 to 10000, got -1/s.test(
      String((error as { cause?: Error }).cause?.message),
    ),
  );
  assert.equal(environment.requestsOf(workflowId).length, 0);

  const { workflowId: unknownTools, handle: handle2 } = await environment.start('unknown-tools', [answer('never')], {
    question: 'q',
    tools: ['lookup', 'nope'],
  });
  await assert.rejects(handle2.result(), (error: Error) =>
    /Unknown tool: nope\. This worker has: lookup, wait/.test(String((error as { cause?: Error }).cause?.message)),
  );
  assert.equal(environment.requestsOf(unknownTools).length, 0);
});
