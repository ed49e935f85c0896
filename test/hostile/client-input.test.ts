import assert from 'node:assert/strict';
import { afterAll, afterEach, beforeAll, test } from '@jest/globals';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { FailureTypes } from '../../src/core/failure-types';
import { approveToolCallUpdate, injectMessageUpdate, progressQuery } from '../../src/core/message-definitions';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { researchAgent } from '../../workflows/research-agent';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { answer, runId, Scenarios, toolCall } from '../integration/support/scenarios';
import { readToolLog } from '../integration/support/tool-log';

/**
 * Issue 28, "client-facing inputs are the contract, nothing more" (rows #4, #5, #11, #13, #16):
 * what a client sends to start or steer a run, and how many calls a model reply may make, against
 * a real dev server, a scripted model server and a worker process. Each test checks that the worker
 * is still alive afterwards and that the attack was refused with a clear error or the run ended
 * with a clear termination. docs/security.md, "Client input", says what stops each.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

afterEach(() => {
  for (const worker of environment.workers)
    assert.doesNotThrow(
      () => process.kill(worker.pid, 0),
      `worker ${worker.pid} is alive:\n${worker.log.slice(-2000)}`,
    );
});

/** The ApplicationFailure a run failed with. */
async function failureOf(handle: WorkflowHandle<typeof researchAgent>): Promise<ApplicationFailure> {
  const error = await handle.result().then(
    (result) =>
      assert.fail(
        `the run was not refused: it ended ${result.termination} with ${JSON.stringify(result.prediction).slice(0, 200)}`,
      ),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof WorkflowFailedError, String(error));
  assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
  return error.cause;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The message of an update the workflow refused. */
async function refusal(update: Promise<unknown>): Promise<string> {
  const error = await update.then(
    () => assert.fail('the update was accepted'),
    (caught: unknown) => caught as Error & { cause?: Error },
  );
  return String(error.cause?.message ?? error.message);
}

test("#4 a client's `resume` pointing at another run's conversation is refused, with limits beyond the schema; a genuine continue-as-new still resumes", async () => {
  const victimId = scenarios.add(runId('victim'), [
    toolCall('lookup', { query: 'victim canary-7f3a' }),
    answer('The victim answer, canary-7f3a.'),
  ]);
  const victim = await environment.startRun(
    { question: 'Victim question, canary-7f3a?', loop: { continueAsNewAfterModelCalls: 1, stuckDetection: false } },
    victimId,
  );
  const victimResult = (await victim.result()) as ResearchRunResult;
  assert.equal(victimResult.termination, 'answer');
  assert.equal(
    victimResult.details.continuedAsNew,
    1,
    'the victim continued as new once and resumed from its own state',
  );

  // The state the victim's continued run started from, as a client with access to histories reads it.
  const started = (await victim.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  const carried = defaultPayloadConverter.fromPayload(started?.input?.payloads?.[0] as never) as ResearchRunInput;
  assert.ok(carried.resume, 'the continued run carries the state it resumed from');
  const resume = {
    ...carried.resume,
    limits: { ...carried.resume.limits, maxModelCalls: 1_000_000, maxDurationMinutes: 1_000_000 },
  };

  // Even with the id of the run the victim continued from: not the run the attacker's continued from (it has none).
  for (const forged of [
    { resume },
    { resume, resumedFrom: carried.resumedFrom ?? started?.continuedExecutionRunId ?? '' },
  ]) {
    const attackerId = scenarios.add(runId('attacker'), [answer('Read the victim transcript.')]);
    const attacker = await environment.startRun({ question: 'Anything?', ...forged }, attackerId);
    const failure = await failureOf(attacker);
    assert.equal(failure.type, FailureTypes.invalidRunInput);
    assert.match(
      failure.message,
      /resume and resumedFrom are internal: only the run's own continue-as-new sets them, never a client/,
    );
    assert.equal(environment.requestsOf(attackerId).length, 0, 'no model call was made with the victim transcript');
  }
}, 240_000);

test('#5 injected messages waiting for the next model call are bounded: the update past 60,000 characters is refused, the run answers', async () => {
  const workflowId = scenarios.add(runId('inject-flood'), [
    toolCall('wait', { seconds: 6 }),
    answer('Done despite the flood.'),
  ]);
  const handle = await environment.startRun({ question: 'Wait, then answer?' }, workflowId);
  await waitFor(async () => ((await handle.query(progressQuery)).phase === 'running_tools' ? true : undefined));
  const text = 'y'.repeat(19_999);
  let accepted = 0;
  let refused = '';
  for (let index = 0; index < 120 && !refused; index++) {
    await handle.executeUpdate(injectMessageUpdate, { args: [{ text }] }).then(
      () => (accepted += 1),
      (error: Error & { cause?: Error }) => (refused = String(error.cause?.message ?? error.message)),
    );
  }
  assert.equal(accepted, 3, 'three messages of 19,999 characters fit');
  assert.equal(
    refused,
    '59997 characters of injected messages already wait for the next model call; with these 19999 they would pass the most, 60000. Send it again once the next model call has taken them',
  );
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'Done despite the flood.');
  const second = environment.requestsOf(workflowId)[1];
  const injected = JSON.stringify(second?.messages ?? []).split('[Message from the user]').length - 1;
  assert.equal(injected, 3, 'the next model call got the three accepted messages');
}, 240_000);

test('#11 approveToolCall with a 1 MiB callId is refused at once without repeating it; the real approval goes through right after', async () => {
  const workflowId = scenarios.add(runId('approve-mib'), [
    toolCall('guarded_lookup', { query: 'sensitive' }),
    answer('Approved and answered.'),
  ]);
  const handle = await environment.startRun({ question: 'Needs approval?' }, workflowId);
  const callId = await waitFor(async () => (await handle.query(progressQuery)).awaitingApproval[0]?.callId);

  const startedAt = Date.now();
  const message = await refusal(
    handle.executeUpdate(approveToolCallUpdate, { args: [{ callId: 'x'.repeat(1024 * 1024), approved: true }] }),
  );
  assert.equal(message, 'callId is 1048576 characters; the most is 200');
  assert.ok(Date.now() - startedAt < 10_000, `refused in ${Date.now() - startedAt} ms`);

  const approvedAt = Date.now();
  assert.deepEqual(await handle.executeUpdate(approveToolCallUpdate, { args: [{ callId, approved: true }] }), {
    callId,
    approved: true,
  });
  assert.ok(Date.now() - approvedAt < 10_000, `the next update went through in ${Date.now() - approvedAt} ms`);
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'Approved and answered.');
}, 240_000);

test('#13 a native reply with 100 tool calls runs the first 8; the ninth is answered that it and the 91 after it were not run', async () => {
  const calls = Array.from({ length: 100 }, (_, index) => ({
    id: `call_${index}`,
    name: 'lookup',
    arguments: JSON.stringify({ query: `flood ${index}` }),
  }));
  const workflowId = scenarios.add(runId('native-flood'), [
    { content: '', toolCalls: calls },
    { content: 'Answered after the flood.' },
  ]);
  const handle = await environment.startRun({ question: 'Flood the tools?', protocol: 'native' }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'Answered after the flood.');

  const ran = readToolLog(environment.toolLog, workflowId).filter((entry) => entry.event === 'start');
  assert.equal(ran.length, 8, 'eight lookups ran');
  const scheduled = ((await handle.fetchHistory()).events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'lookup',
  );
  assert.equal(scheduled.length, 8, 'eight tool activities in history');
  const messages = await environment.transcript(result);
  const reply = messages.find((message) => message.role === 'assistant' && message.toolCalls?.length);
  assert.deepEqual(
    reply?.toolCalls?.map((call) => call.id),
    calls.slice(0, 9).map((call) => call.id),
    'the stored reply keeps the calls that ran and the first past the cap',
  );
  const answers = messages.filter((message) => message.role === 'tool');
  assert.deepEqual(
    answers.map((message) => message.toolCallId),
    calls.slice(0, 9).map((call) => call.id),
    'each kept call has its tool message, in order',
  );
  assert.equal(
    answers[8]?.content,
    'Error: at most 8 tool calls are run per turn; this one was not run, nor the 91 after it.',
  );
  // The model's next request is a valid conversation: every tool call it holds is answered.
  const next = environment.requestsOf(workflowId)[1]?.messages ?? [];
  const asked = next.flatMap((message) => ((message.tool_calls ?? []) as Array<{ id: string }>).map((call) => call.id));
  assert.deepEqual(
    next.filter((message) => message.role === 'tool').map((message) => message.tool_call_id),
    asked,
  );
}, 240_000);

test('#16 input keys __proto__ and constructor are refused as unknown fields', async () => {
  const workflowId = scenarios.add(runId('proto-keys'), [answer('Should not run.')]);
  const input = JSON.parse(
    '{"question": "Polluted?", "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "limits": {"__proto__": {"maxModelCalls": 1000000}}}',
  ) as ResearchRunInput;
  const handle = await environment.startRun(input, workflowId);
  const failure = await failureOf(handle);
  assert.equal(failure.type, FailureTypes.invalidRunInput);
  assert.match(failure.message, /__proto__ is not a known field/);
  assert.match(failure.message, /(: |; )constructor is not a known field/);
  assert.match(failure.message, /limits\.__proto__ is not a known field/);
  assert.equal(environment.requestsOf(workflowId).length, 0, 'no model call was made');
}, 120_000);
