import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { followRun } from '../../src/cli/follow-run';
import {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
} from '../../src/core/message-definitions';
import { protocolProblems } from '../integration/support/agent-environment';
import { answer, toolCall } from '../integration/support/scenarios';
import { readToolLog, waitForToolLog } from '../integration/support/tool-log';
import { WorkflowEnvironment } from './support/workflow-environment';

/**
 * The loop's controls on the real workflows, in process (the integration tier held them
 * until issue 29; docs/testing.md lists where each went):
 * the three protocols, stuck detection, compression, structured output, steering updates,
 * approvals and continue-as-new.
 */
let environment: WorkflowEnvironment;

beforeAll(async () => {
  environment = await WorkflowEnvironment.start();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

/** An update the workflow's validator refused, with the validator's message. */
async function refused(update: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(update, (error: Error) => message.test(String((error as { cause?: Error }).cause?.message)));
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('native tool calling: three calls in one turn run in parallel, one fails, one is slow; answers keep call order and ids', async () => {
  const { workflowId, result, messages, requests } = await environment.run(
    'native',
    [
      {
        content: '',
        toolCalls: [
          { id: 'call_slow', name: 'wait', arguments: '{"seconds": 2}' },
          { id: 'call_fail', name: 'broken', arguments: '{}' },
          { id: 'call_fast', name: 'wait', arguments: '{"seconds": 1}' },
        ],
      },
      { content: 'BYD sold more.' },
    ],
    { protocol: 'native' },
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD sold more.');
  assert.equal(result.toolCalls, 3);
  const first = requests[0];
  assert.deepEqual([...(first?.tools ?? [])].sort(), [
    'big_output',
    'broken',
    'guarded_lookup',
    'hang',
    'lookup',
    'wait',
  ]);
  assert.equal(first?.stop, undefined);

  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'tool', 'tool', 'assistant'],
  );
  assert.deepEqual(
    messages[2]?.toolCalls?.map((call) => call.id),
    ['call_slow', 'call_fail', 'call_fast'],
  );
  assert.deepEqual(
    messages.slice(3, 6).map((message) => message.toolCallId),
    ['call_slow', 'call_fail', 'call_fast'],
  );
  assert.equal(messages[3]?.content, 'Waited 2 seconds.');
  assert.match(messages[4]?.content ?? '', /the tool "broken" failed: the backend answered 503/);
  assert.equal(messages[5]?.content, 'Waited 1 seconds.');
  const second = requests[1]?.messages ?? [];
  assert.deepEqual(
    second.slice(3).map((message) => message.toolCallId),
    ['call_slow', 'call_fail', 'call_fast'],
  );

  const starts = readToolLog(environment.toolLog, workflowId).filter((entry) => entry.event === 'start');
  assert.equal(starts.length, 2);
  assert.ok(Math.abs((starts[0]?.at ?? 0) - (starts[1]?.at ?? 0)) < 900, 'both waits ran at the same time');
});

test('classic Thought/Action format: observations, a correction for broken format, and Final Answer', async () => {
  const { result, messages, requests } = await environment.run(
    'classic',
    [
      { content: 'Thought: I need data.\nAction: lookup\nAction Input: {"query": "BYD 2024"}' },
      { content: 'I will just chat instead.' },
      { content: 'Thought: Done.\nFinal Answer: BYD, by 2.48 million.' },
    ],
    { protocol: 'classic' },
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD, by 2.48 million.');
  assert.deepEqual(requests[0]?.stop, ['\nObservation:', 'Observation:']);
  assert.match(messages[0]?.content ?? '', /Action Input:/);
  assert.match(messages[3]?.content ?? '', /^Observation: Facts about BYD 2024/);
  assert.match(messages[5]?.content ?? '', /^Observation: Your reply did not follow the format/);
});

test('stuck detection: the same call three times gets a warning; repeating after it ends stuck through the final answer', async () => {
  const { result, requests } = await environment.run('stuck', (turn, request) =>
    String(request.messages.at(-1)?.content).includes('Stop calling tools now')
      ? answer('best effort: BYD')
      : toolCall('lookup', { query: 'same' }),
  );
  assert.equal(result.termination, 'stuck');
  assert.equal(result.prediction, 'best effort: BYD');
  assert.equal(result.details.stuckNudges, 1);
  assert.equal(result.details.finalAnswerPhase, 'stuck');
  const nudged = requests.findIndex((request) =>
    String(request.messages.at(-1)?.content).includes('same tool call three times in a row'),
  );
  assert.equal(nudged, 3, 'the warning comes with the third observation');
  assert.equal(requests.length, 5, 'three calls, one more after the warning, then the final answer');
});

test('stuck detection: an A-B-A-B ping-pong gets a warning', async () => {
  const { result, requests } = await environment.run('ping-pong', (turn) =>
    turn <= 4 ? toolCall('lookup', { query: turn % 2 ? 'A' : 'B' }) : answer('done'),
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.details.stuckNudges, 1);
  assert.match(String(requests[4]?.messages.at(-1)?.content), /alternating between the same two tool calls/);
});

test('compression: old observations become stubs that resolve, then old turns fold into a summary; the next request fits', async () => {
  const limit = 4_000;
  const { result, requests, messages } = await environment.run(
    'compress',
    (turn, request) => {
      if (request.purpose === 'summary') return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024; Tesla 1.79M.' };
      // Folding turns into a summary removes assistant messages, so count calls by the label.
      const call = request.modelCall ?? turn;
      return call <= 6 ? toolCall('big_output', { characters: 3_000 }, `step ${call}`) : answer('BYD');
    },
    {
      limits: { maxContextTokens: limit },
      loop: { compressAtFraction: 0.5, keepRecentTurns: 1, stuckDetection: false },
    },
  );
  assert.equal(result.termination, 'answer');
  assert.ok(result.details.compressions.length >= 1, 'compressed at least once');
  const stubbed = requests.find((request) =>
    request.messages.some((message) => String(message.content).includes('[Observation omitted to save context')),
  );
  assert.ok(stubbed, 'a request saw stubs');
  const reference = /transcript store as (sha256:[0-9a-f]{64})/.exec(JSON.stringify(stubbed.messages))?.[1] as string;
  assert.equal(
    (await environment.store.getText(reference)).length,
    3_000,
    'the stub resolves to the whole observation',
  );
  for (const compression of result.details.compressions) assert.ok(compression.contextTokensAfter < limit);
  const afterCompression = requests.at(-1)?.messages ?? [];
  const characters = afterCompression.reduce((sum, message) => sum + String(message.content ?? '').length, 0);
  assert.ok(characters / 4 < limit, `the last request is about ${Math.round(characters / 4)} tokens, under ${limit}`);
  assert.ok(
    result.details.compressions.some((compression) => compression.summarizedTurns > 0),
    'older turns were summarised',
  );
  assert.match(messages[1]?.content ?? '', /\[Summary of the research so far[\s\S]*SUMMARY: BYD sold 4\.27M/);
  assert.deepEqual(protocolProblems(messages), []);
});

test('structured output: answers that fail the schema get the validation error and another try', async () => {
  const schema = {
    type: 'object',
    properties: { winner: { type: 'string' }, margin: { type: 'integer' } },
    required: ['winner', 'margin'],
    additionalProperties: false,
  };
  const { result, requests } = await environment.run(
    'structured',
    [
      answer('BYD'),
      answer('{"winner": "BYD", "margin": "lots"}'),
      answer('```json\n{"winner": "BYD", "margin": 2482919}\n```'),
    ],
    {
      answerSchema: schema,
    },
  );
  assert.equal(result.termination, 'answer');
  assert.deepEqual(result.parsedAnswer, { winner: 'BYD', margin: 2482919 });
  assert.match(String(requests[0]?.messages[0]?.content), /must be a JSON object matching this JSON schema/);
  assert.match(String(requests[1]?.messages.at(-1)?.content), /not valid JSON/);
  assert.match(String(requests[2]?.messages.at(-1)?.content), /\$\.margin must be an integer, got "lots"/);
});

test('structured output that never matches ends error after the allowed attempts', async () => {
  const { result, requests } = await environment.run('structured-fail', [answer('not json')], {
    answerSchema: { type: 'object' },
    loop: { answerAttempts: 2 },
  });
  assert.equal(result.termination, 'error');
  assert.match(result.error ?? '', /did not match the answer schema after 2 attempts/);
  assert.equal(requests.length, 2);
});

test('steering: injectMessage reaches the next model call; progress shows budgets left', async () => {
  const { workflowId, handle } = await environment.start(
    'inject',
    [toolCall('wait', { seconds: 2 }), answer('focused')],
    { limits: { maxModelCalls: 7 } },
  );
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  const progress = await handle.query(progressQuery);
  assert.equal(progress.modelCalls, 1);
  assert.equal(progress.remaining.modelCalls, 6);
  assert.deepEqual(progress.openToolCalls, ['wait({"seconds":2})']);
  const accepted = await handle.executeUpdate(injectMessageUpdate, { args: [{ text: 'Focus on 2024 only.' }] });
  assert.deepEqual(accepted, { modelCall: 2 });
  await refused(handle.executeUpdate(injectMessageUpdate, { args: [{ text: '  ' }] }), /non-empty/);
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.match(
    String(environment.requestsOf(workflowId)[1]?.messages.at(-1)?.content),
    /Waited 2 seconds[\s\S]*\[Message from the user\] Focus on 2024 only\./,
  );
});

test('steering: finishNow stops a long tool and asks for the best answer now', async () => {
  const { workflowId, handle } = await environment.start('finish-now', (turn, request) =>
    String(request.messages.at(-1)?.content).includes('Stop calling tools now')
      ? answer('partial answer')
      : toolCall('wait', { seconds: 60 }),
  );
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  await handle.executeUpdate(finishNowUpdate, { args: [{ reason: 'the user has enough' }] });
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'partial answer');
  assert.equal(result.details.finishRequested, true);
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(
    String(environment.requestsOf(workflowId).at(-1)?.messages.at(-1)?.content),
    /asked to finish now\. \(the user has enough\)|finish now \(the user has enough\)/,
  );
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'stop'));
  assert.equal(
    readToolLog(environment.toolLog, workflowId).find((entry) => entry.event === 'stop')?.reason,
    'cancelled',
  );
});

test('steering: setLimits raises the call budget and refuses nonsense', async () => {
  const { workflowId, handle } = await environment.start(
    'limits',
    (turn) => ({ ...toolCall('wait', { seconds: turn === 1 ? 2 : 0 }) }),
    {
      limits: { maxModelCalls: 2 },
      loop: { stuckDetection: false },
    },
  );
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  await refused(
    handle.executeUpdate(setLimitsUpdate, { args: [{ maxModelCalls: 0 }] }),
    /maxModelCalls must be an integer from 1 to 10000, got 0|below the 1 calls/,
  );
  await refused(handle.executeUpdate(setLimitsUpdate, { args: [{ maxDurationMinutes: 0.0001 }] }), /not more than the/);
  const limits = await handle.executeUpdate(setLimitsUpdate, { args: [{ maxModelCalls: 4 }] });
  assert.equal(limits.maxModelCalls, 4);
  const result = await handle.result();
  assert.equal(result.termination, 'max_calls');
  assert.equal(result.iterations, 5, 'four calls and the final answer call');
});

test('approval: a tool that requires it waits; approved runs, denied and timed-out calls become observations', async () => {
  const approved = await environment.start('approve', [toolCall('guarded_lookup', { query: 'secret' }), answer('ok')]);
  const waiting = await waitFor(async () => (await approved.handle.query(progressQuery)).awaitingApproval[0]);
  assert.equal(waiting.tool, 'guarded_lookup');
  assert.equal(readToolLog(environment.toolLog, approved.workflowId).length, 0, 'nothing ran before approval');
  await refused(
    approved.handle.executeUpdate(approveToolCallUpdate, { args: [{ callId: 'nope', approved: true }] }),
    /no tool call nope is waiting/,
  );
  await approved.handle.executeUpdate(approveToolCallUpdate, {
    args: [{ callId: waiting.callId, approved: true, reviewer: 'alice' }],
  });
  const approvedMessages = await environment.transcript(await approved.handle.result());
  assert.match(approvedMessages[3]?.content ?? '', /Facts about secret/);

  const denied = await environment.start('deny', [toolCall('guarded_lookup', { query: 'secret' }), answer('ok')]);
  const deniedCall = await waitFor(async () => (await denied.handle.query(progressQuery)).awaitingApproval[0]);
  await denied.handle.executeUpdate(approveToolCallUpdate, {
    args: [{ callId: deniedCall.callId, approved: false, reason: 'not for this question', reviewer: 'bob' }],
  });
  const deniedMessages = await environment.transcript(await denied.handle.result());
  assert.match(deniedMessages[3]?.content ?? '', /denied by bob: not for this question/);

  const timedOut = await environment.run(
    'approval-timeout',
    [toolCall('guarded_lookup', { query: 'secret' }), answer('ok')],
    { loop: { approvalTimeoutMinutes: 0.02 } },
  );
  assert.match(
    timedOut.messages[3]?.content ?? '',
    /no one approved this call of "guarded_lookup" within 0\.02 minutes/,
  );
  assert.equal(
    readToolLog(environment.toolLog, denied.workflowId).length +
      readToolLog(environment.toolLog, timedOut.workflowId).length,
    0,
  );
});

test('continue-as-new: a run that continues twice returns one complete transcript under the same workflow id', async () => {
  const lines: string[] = [];
  const { workflowId, handle } = await environment.start(
    'continue-as-new',
    (turn) => (turn <= 6 ? toolCall('lookup', { query: `step ${turn}` }) : answer('all steps done')),
    {
      loop: { continueAsNewAfterModelCalls: 2, stuckDetection: false },
    },
  );
  const followed = await followRun(environment.client, workflowId, (line) => lines.push(line));
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(followed.prediction, 'all steps done');
  assert.ok(result.details.continuedAsNew >= 2, `continued ${result.details.continuedAsNew} times`);
  assert.equal(result.iterations, 7);
  const messages = await environment.transcript(result);
  assert.equal(messages.length, 2 + 7 * 2 - 1);
  assert.deepEqual(protocolProblems(messages), []);
  for (let step = 1; step <= 6; step += 1)
    assert.ok(
      messages.some((message) => message.content.includes(`Facts about step ${step}`)),
      `step ${step} is in the transcript`,
    );
  assert.equal(
    lines.filter((line) => line.includes('continued as new')).length,
    result.details.continuedAsNew,
    'follow crossed every continue-as-new',
  );
  assert.equal(lines.filter((line) => /^\[call \d+\] calling the model/.test(line)).length, 7);
  const runs: string[] = [];
  for await (const execution of environment.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(execution.runId);
  assert.ok(runs.length >= 3, `${runs.length} runs share the workflow id`);
});
