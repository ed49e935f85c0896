import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { runId, Scenarios, toolCall } from './support/scenarios';
import { readToolLog, waitForToolLog } from './support/tool-log';

const scenarios = new Scenarios();
let environment: AgentEnvironment;
const TOOL_HEARTBEAT_MS = 2_000; // the `wait` test tool's heartbeat timeout

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

test('cancelling through the client during a long tool call stops the tool and ends cancelled with every call answered', async () => {
  const workflowId = scenarios.add(runId('cancel-tool'), [
    toolCall('lookup', { query: 'first' }),
    toolCall('wait', { seconds: 120 }),
  ]);
  const handle = await environment.startRun({ question: 'A long one.' }, workflowId);
  await waitForToolLog(environment.toolLog, workflowId, (entries) =>
    entries.some((entry) => entry.tool === 'wait' && entry.event === 'start'),
  );

  const cancelledAt = Date.now();
  await handle.cancel();
  const result = await handle.result();
  const endedAt = Date.now();

  assert.equal(result.termination, 'cancelled');
  assert.ok(endedAt - cancelledAt < TOOL_HEARTBEAT_MS + 1_500, `ended ${endedAt - cancelledAt} ms after the cancel`);
  const stop = readToolLog(environment.toolLog, workflowId).find(
    (entry) => entry.tool === 'wait' && entry.event === 'stop',
  );
  assert.equal(stop?.reason, 'cancelled', 'the tool itself stopped');
  assert.ok((stop?.at ?? Infinity) <= endedAt, 'the tool stopped before the run reported its end');

  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(
    messages.at(-1)?.content ?? '',
    /^<tool_response>\nNot completed: the run was cancelled while this tool call was open\.\n<\/tool_response>$/,
  );
  const description = await handle.describe();
  assert.equal(description.status.name, 'COMPLETED');
  assert.equal(
    description.typedSearchAttributes.getAll().find((pair) => pair.key.name === 'ReactTermination')?.value,
    'cancelled',
  );
});

test('cancelling during a model call aborts the request and keeps the earlier observations', async () => {
  const workflowId = scenarios.add(runId('cancel-model'), [
    toolCall('lookup', { query: 'kept' }),
    { content: 'never finished', chunks: 50, delayBetweenChunksMs: 500 },
  ]);
  const handle = await environment.startRun({ question: 'Cancel me while thinking.' }, workflowId);
  await environment.model.waitForRequest((request) => request.workflowId === workflowId && request.modelCall === 2);
  await handle.cancel();
  const result = await handle.result();

  assert.equal(result.termination, 'cancelled');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.match(messages[3]?.content ?? '', /Facts about kept/);
  const second = await environment.model.waitForRequest(
    (request) => request.workflowId === workflowId && request.modelCall === 2 && request.aborted,
    10_000,
  );
  assert.equal(second.completed, false);
});
