import assert from 'node:assert/strict';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { WorkerProcess } from './support/worker-process';

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

test('one run is served by three single-role workers on three task queues', async () => {
  const queues = {
    REACT_AGENT_TASK_QUEUE: environment.taskQueue,
    REACT_AGENT_MODEL_TASK_QUEUE: `${environment.taskQueue}-model`,
    REACT_AGENT_TOOL_TASK_QUEUE: `${environment.taskQueue}-tools`,
    REACT_AGENT_MODEL_CALLS_PER_SECOND: '50',
  };
  const [workflows, model, tools] = await Promise.all([
    environment.startWorker({ ...queues, REACT_AGENT_WORKER_ROLE: 'workflows' }),
    environment.startWorker({ ...queues, REACT_AGENT_WORKER_ROLE: 'model' }),
    environment.startWorker({ ...queues, REACT_AGENT_WORKER_ROLE: 'tools' }),
  ]);
  assert.match(
    workflows.log,
    new RegExp(`role workflows, task queue "${environment.taskQueue}" \\(workflows; 20 activity slots\\)`),
  );
  assert.match(
    model.log,
    new RegExp(`role model, task queue "${environment.taskQueue}-model" \\(model calls; 200 activity slots, 50/s\\)`),
  );
  assert.match(
    tools.log,
    new RegExp(`role tools, task queue "${environment.taskQueue}-tools" \\(tools; 8 activity slots\\)`),
  );

  const workflowId = scenarios.add(runId('roles'), [
    toolCall('lookup', { query: 'BYD 2024 sales' }),
    answer('BYD sold more.'),
  ]);
  const handle = await environment.startRun({ question: 'Who sold more cars?' }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD sold more.');
  assert.equal(result.toolCalls, 1);
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages[3]?.content ?? '', /^<tool_response>\nFacts about BYD 2024 sales: /);

  // Each activity was scheduled on its kind's queue and started by that role's worker.
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const startedBy = new Map<string, string>();
  for (const event of events) {
    const started = event.activityTaskStartedEventAttributes;
    if (started) startedBy.set(String(started.scheduledEventId), started.identity ?? '');
  }
  const scheduled = events
    .filter((event) => event.activityTaskScheduledEventAttributes)
    .map((event) => ({
      type: event.activityTaskScheduledEventAttributes?.activityType?.name,
      queue: event.activityTaskScheduledEventAttributes?.taskQueue?.name,
      identity: startedBy.get(String(event.eventId)) ?? '',
    }));
  // The bookkeeping runs as local activities in the workflows worker's own workflow tasks (issue 34):
  // no activity task of its own, its outcome a marker; the model's window is learned with the transcript.
  const expected: Record<string, { queue: string; worker: WorkerProcess }> = {
    callModel: { queue: `${environment.taskQueue}-model`, worker: model },
    lookup: { queue: `${environment.taskQueue}-tools`, worker: tools },
  };
  assert.deepEqual(
    scheduled.map((activity) => activity.type),
    ['callModel', 'lookup', 'callModel'],
  );
  const localActivities = events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.data?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type] : [];
  });
  assert.deepEqual(localActivities, ['startConversation']);
  for (const activity of scheduled) {
    const want = expected[activity.type ?? ''];
    assert.ok(want, `unexpected activity ${activity.type}`);
    assert.equal(activity.queue, want.queue, `${activity.type} queue`);
    assert.match(activity.identity, new RegExp(`^${want.worker.pid}@`), `${activity.type} worker`);
  }
  const workflowTaskIdentities = events.flatMap((event) =>
    event.workflowTaskCompletedEventAttributes ? [event.workflowTaskCompletedEventAttributes.identity ?? ''] : [],
  );
  assert.ok(workflowTaskIdentities.length > 0);
  for (const identity of workflowTaskIdentities) assert.match(identity, new RegExp(`^${workflows.pid}@`));

  await Promise.all([workflows.stop(), model.stop(), tools.stop()]);
}, 180_000);

test('role all with distinct queues runs one Worker per queue in one process', async () => {
  const worker = await environment.startWorker({
    REACT_AGENT_MODEL_TASK_QUEUE: `${environment.taskQueue}-m`,
    REACT_AGENT_TOOL_TASK_QUEUE: `${environment.taskQueue}-t`,
    REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS: '30',
    REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS: '3',
  });
  assert.match(
    worker.log,
    new RegExp(
      `role all, task queues "${environment.taskQueue}" \\(workflows; 20 activity slots\\), "${environment.taskQueue}-m" \\(model calls; 30 activity slots\\), "${environment.taskQueue}-t" \\(tools; 3 activity slots\\)`,
    ),
  );
  const workflowId = scenarios.add(runId('all'), [toolCall('lookup', { query: 'Tesla' }), answer('Tesla sold fewer.')]);
  const result = (await (
    await environment.startRun({ question: 'And Tesla?' }, workflowId)
  ).result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.toolCalls, 1);
  await worker.stop();
}, 120_000);

test('a bad role value stops the worker at start, naming the variable', async () => {
  const started = WorkerProcess.start({ ...environment.environment, REACT_AGENT_WORKER_ROLE: 'gpu' }, 60_000);
  await expect(started).rejects.toThrow(
    /REACT_AGENT_WORKER_ROLE must be one of workflows, model, tools, all, got "gpu"/,
  );
}, 90_000);
