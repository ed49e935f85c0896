/**
 * Issue 34: workers that trace (the OpenTelemetry workflow interceptors in their bundle, an OTLP
 * endpoint) and workers that do not (the untraced bundle: workflows/tracing-turns-interceptor.ts)
 * serve one task queue. A run with two approvals and a shared model limit (each model call an
 * update of the `modelLimiter` workflow) moves from a traced worker to an untraced one and back,
 * each worker stopped while the run waits for an approval, so the next replays the whole history
 * the other recorded and then handles the approval's update itself. Neither the run nor the limiter
 * has a failed workflow task (no nondeterminism), the run answers, and the run's and the limiter's
 * histories replay on both bundles.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../../src/config/workflow-interceptors';
import { approveToolCallUpdate, progressQuery } from '../../src/core/message-definitions';
import { modelLimiterWorkflowId } from '../../src/core/model-limits/model-limit';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { runId, Scenarios } from './support/scenarios';
import { cachedWorkflowBundle } from './support/workflow-bundle';

const EventType = temporal.api.enums.v1.EventType;
const LIMITS = JSON.stringify({ 'scripted-model': { tokensPerMinute: 1_000_000, leaseSeconds: 60 } });

const scenarios = new Scenarios();
let environment: AgentEnvironment;
let receiver: Server;
let bundles: { traced: string; untraced: string };

beforeAll(async () => {
  // An OTLP/HTTP receiver that takes every export, so the traced workers export for real.
  receiver = createServer((request, response) => {
    request.resume().on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const [started, traced, untraced] = await Promise.all([
    AgentEnvironment.start({ script: scenarios.script }),
    cachedWorkflowBundle(undefined, TRACING_WORKFLOW_INTERCEPTOR_MODULES),
    cachedWorkflowBundle(undefined, UNTRACED_WORKFLOW_INTERCEPTOR_MODULES),
  ]);
  environment = started;
  bundles = { traced, untraced };
}, 180_000);

afterAll(async () => {
  await environment?.close();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
}, 60_000);

const workerOf = (kind: 'traced' | 'untraced') =>
  environment.startWorker({
    REACT_AGENT_WORKFLOW_BUNDLE: bundles[kind],
    REACT_AGENT_MODEL_LIMITS: LIMITS,
    ...(kind === 'traced'
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
          OTEL_BSP_SCHEDULE_DELAY: '200',
        }
      : {}),
  });

/** The id of the call waiting for approval, once one other than `except` waits. */
async function awaitingApproval(handle: WorkflowHandle, except?: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const calls = await handle
      .query(progressQuery)
      .then((progress) => progress.awaitingApproval)
      .catch(() => []);
    const waiting = calls.find((call) => call.callId !== except);
    if (waiting) return waiting.callId;
    if (Date.now() > deadline) throw new Error('no call waited for approval');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function failedTasks(events: temporal.api.history.v1.IHistoryEvent[]): string[] {
  return events
    .filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
    .map((event) => event.workflowTaskFailedEventAttributes?.failure?.message ?? 'failed');
}

test('a run moves between traced and untraced workers on one task queue: approvals and limiter reservations replay either way, no failed workflow task', async () => {
  const workflowId = scenarios.add(runId('fleet'), [
    { content: '', toolCalls: [{ id: 'a', name: 'guarded_lookup', arguments: '{"query":"BYD"}' }] },
    { content: '', toolCalls: [{ id: 'b', name: 'guarded_lookup', arguments: '{"query":"Tesla"}' }] },
    { content: 'BYD' },
  ]);
  const first = await workerOf('traced');
  const handle = await environment.startRun({ question: 'Who sold more cars?', protocol: 'native' }, workflowId);
  const a = await awaitingApproval(handle);
  await first.stop();

  // The untraced worker replays what the traced one recorded, then takes the approval and the next model call.
  const second = await workerOf('untraced');
  await handle.executeUpdate(approveToolCallUpdate, { args: [{ callId: a, approved: true, reviewer: 'alice' }] });
  const b = await awaitingApproval(handle, a);
  await second.stop();

  // And back: a traced worker replays a history both kinds wrote.
  const third = await workerOf('traced');
  await handle.executeUpdate(approveToolCallUpdate, {
    args: [{ callId: b, approved: false, reason: 'not this one', reviewer: 'bob' }],
  });
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD');

  const run = await handle.fetchHistory();
  const limiter = await environment.client.workflow.getHandle(modelLimiterWorkflowId('scripted-model')).fetchHistory();
  assert.deepEqual(failedTasks(run.events ?? []), []);
  assert.deepEqual(failedTasks(limiter.events ?? []), []);
  // Each of the three workers completed workflow tasks of the run: the run did move.
  const identities = new Set(
    (run.events ?? []).map((event) => event.workflowTaskCompletedEventAttributes?.identity).filter(Boolean),
  );
  for (const worker of [first, second, third])
    assert.ok(
      [...identities].some((identity) => identity?.startsWith(`${worker.pid}@`)),
      `${worker.pid} in ${[...identities].join(', ')}`,
    );
  const updates = (history: typeof run) =>
    (history.events ?? []).filter(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    ).length;
  assert.equal(updates(run), 2);
  assert.ok(updates(limiter) >= 3, `${updates(limiter)} reservations completed`);

  // The mixed histories replay on either bundle.
  for (const codePath of Object.values(bundles)) {
    await Worker.runReplayHistory({ workflowBundle: { codePath } }, run, workflowId);
    await Worker.runReplayHistory({ workflowBundle: { codePath } }, limiter, modelLimiterWorkflowId('scripted-model'));
  }
}, 240_000);

test('with no bundle named, a worker without an OTLP endpoint runs the untraced bundle npm run build wrote, one with an endpoint the traced one', async () => {
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const untraced = await environment.startWorker({ REACT_AGENT_WORKFLOW_BUNDLE: '' });
  const traced = await environment.startWorker({
    REACT_AGENT_WORKFLOW_BUNDLE: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  });
  try {
    assert.match(untraced.log, /workflows dist\/workflow-bundle-untraced\.js, untraced;/);
    assert.match(traced.log, /workflows dist\/workflow-bundle\.js, traced;/);
  } finally {
    await Promise.all([untraced.stop(), traced.stop()]);
  }
}, 120_000);
