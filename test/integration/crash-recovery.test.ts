import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ScriptedRequestRecord } from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { readToolLog, waitForToolLog } from './support/tool-log';

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
});

afterAll(async () => {
  await environment?.close();
});

/** For each model call number: how many requests completed. Completed calls must never be sent again. */
function completedPerCall(requests: ScriptedRequestRecord[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const request of requests) {
    if (request.completed) counts.set(request.modelCall as number, (counts.get(request.modelCall as number) ?? 0) + 1);
  }
  return counts;
}

test('a worker SIGKILLed during a model call: a new worker finishes the run and no completed call is repeated', async () => {
  const first = await environment.startWorker();
  const workflowId = scenarios.add(runId('kill-during-model'), [
    toolCall('lookup', { query: 'BYD' }),
    { ...toolCall('lookup', { query: 'Tesla' }), chunks: 20, delayBetweenChunksMs: 200 },
    answer('BYD'),
  ]);
  const handle = await environment.startRun({ question: 'Who sold more?' }, workflowId);
  await environment.model.waitForRequest((request) => request.workflowId === workflowId && request.modelCall === 2);
  await new Promise((resolve) => setTimeout(resolve, 600));
  await first.crash();
  await environment.startWorker();

  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 3);
  const requests = environment.requestsOf(workflowId);
  const interrupted = requests.filter((request) => request.modelCall === 2 && !request.completed);
  assert.equal(interrupted.length, 1, 'the call in flight at the kill was cut off');
  assert.deepEqual([...completedPerCall(requests).entries()].sort(), [
    [1, 1],
    [2, 1],
    [3, 1],
  ]);
  assert.deepEqual(protocolProblems(await environment.transcript(result)), []);
  assert.equal(
    readToolLog(environment.toolLog, workflowId).filter((entry) => entry.event === 'start').length,
    2,
    'each tool ran once',
  );
}, 300_000);

test('a worker SIGKILLed during a tool call: the tool is retried on a new worker and no model call is repeated', async () => {
  await environment.crashAllWorkers();
  const first = await environment.startWorker();
  const workflowId = scenarios.add(runId('kill-during-tool'), [toolCall('wait', { seconds: 3 }), answer('waited')]);
  const handle = await environment.startRun({ question: 'Wait, then answer.' }, workflowId);
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  await first.crash();
  await environment.startWorker();

  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  const requests = environment.requestsOf(workflowId);
  assert.deepEqual(
    requests.map((request) => request.modelCall),
    [1, 2],
    'each model call was sent exactly once',
  );
  const log = readToolLog(environment.toolLog, workflowId);
  assert.equal(log.filter((entry) => entry.event === 'start').length, 2, 'the tool started again after the crash');
  assert.equal(log.filter((entry) => entry.event === 'stop' && entry.reason === 'done').length, 1);
  assert.notEqual(log[0]?.pid, log.at(-1)?.pid, 'the retry ran in the new worker');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages[3]?.content ?? '', /Waited 3 seconds/);
}, 300_000);

test('the dev server SIGKILLed mid-run and restarted on the same database file: the run finishes', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const workflowId = scenarios.add(runId('kill-server'), [
    toolCall('wait', { seconds: 2 }),
    toolCall('lookup', { query: 'after restart' }),
    answer('survived'),
  ]);
  const handle = await environment.startRun({ question: 'Survive a server crash.' }, workflowId);
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  await environment.server.kill();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await environment.server.restart();

  const result = await environment.client.workflow.getHandle(handle.workflowId).result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'survived');
  assert.deepEqual(protocolProblems(await environment.transcript(result)), []);
  assert.deepEqual([...completedPerCall(environment.requestsOf(workflowId)).values()], [1, 1, 1]);
}, 300_000);

test('a worker stopped with SIGTERM gives the running tool its grace time, exits, and another worker finishes the run', async () => {
  await environment.crashAllWorkers();
  const first = await environment.startWorker();
  const workflowId = scenarios.add(runId('sigterm'), [
    toolCall('wait', { seconds: 4 }),
    answer('after a graceful stop'),
  ]);
  const handle = await environment.startRun({ question: 'Stop gracefully.' }, workflowId);
  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  const stoppedAt = Date.now();
  const exitCode = await first.stop();
  assert.equal(exitCode, 0, `the worker exited cleanly:\n${first.log.slice(-2_000)}`);
  assert.ok(Date.now() - stoppedAt < 15_000, 'shutdown took the grace time, not the tool time');
  const interrupted = readToolLog(environment.toolLog, workflowId).find((entry) => entry.event === 'stop');
  assert.equal(interrupted?.reason, 'cancelled', 'after the grace time the tool was cancelled, not abandoned');
  await environment.startWorker();
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(
    readToolLog(environment.toolLog, workflowId).filter((entry) => entry.event === 'stop' && entry.reason === 'done')
      .length,
    1,
  );
}, 300_000);
