import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, test } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { resolveTemporalCli } from '../../src/processes/temporal-cli';
import type { ResearchRunResult } from '../../src/core/run-result';
import { countAssistantMessages, type Script } from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, toolCall } from './support/scenarios';
import { storeBatchInput } from '../../src/storage/batch-input-file';
import { WorkflowTypes, type ResearchBatchWorkflow } from '../../src/core/workflow-types';
import { batchId, questions } from './support/batch-helpers';
import { cachedWorkflowBundle } from './support/workflow-bundle';
import type { WorkerProcess } from './support/worker-process';

/**
 * Deploys that do not break runs in flight (issue 20, docs/deploys.md): worker A (build A) takes
 * runs; worker B, whose `researchAgent` starts with a timer (test/fakes/changed-workflows.ts: A's
 * runs could not replay on it), is deployed and made current with the documented
 * `temporal worker deployment` commands; new runs go to B, A's runs finish on A (every workflow and
 * activity task of theirs executed by A's process), A drains and is stopped.
 */

const run = promisify(execFile);
const DEPLOYMENT = 'react-agent-test';
/** A's runs wait at their second model call until B has taken and finished its own runs. */
let releaseA!: () => void;
const gateA = new Promise<void>((resolve) => (releaseA = resolve));
/** The batch's first run waits at its second model call until B is current. */
let releaseBatchRun!: () => void;
const gateBatchRun = new Promise<void>((resolve) => (releaseBatchRun = resolve));

const script: Script = async (request) => {
  const id = request.workflowId ?? '';
  if (countAssistantMessages(request.messages) === 0) return toolCall('lookup', { query: id });
  if (id.startsWith('build-a-')) await gateA;
  if (/^nightly-.*\/q0-r1$/.test(id)) await gateBatchRun;
  return answer(`Answered ${id}.`);
};

let environment: AgentEnvironment;
let bundleB: string;

beforeAll(async () => {
  bundleB = await cachedWorkflowBundle(require.resolve('../fakes/changed-workflows'));
  environment = await AgentEnvironment.start({
    script,
    // The server checks a draining version's open runs every few seconds instead of minutes.
    serverDynamicConfig: {
      'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '2s',
      'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
    },
  });
}, 240_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** `temporal worker deployment …` against the test's server, as docs/deploys.md writes it; its JSON output. */
async function deployment(...args: string[]): Promise<string> {
  const { stdout } = await run(
    resolveTemporalCli().path,
    [
      'worker',
      'deployment',
      ...args,
      '--address',
      environment.server.address,
      '--namespace',
      'default',
      '--output',
      'json',
    ],
    {
      timeout: 30_000,
    },
  );
  return stdout;
}

/** Retries `action` until it stops throwing (a worker's version is registered once it polls). */
async function eventually<T>(action: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await action();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

function buildIdOf(worker: WorkerProcess, deploymentName = DEPLOYMENT): string {
  const match = /deployment (\S+), build ([^;\s]+);/.exec(worker.log);
  assert.ok(match, `no deployment in the banner:\n${worker.log}`);
  assert.equal(match[1], deploymentName);
  return match[2] as string;
}

/** `drainageInfo.drainageStatus` of a version (`draining` while pinned runs of it are open, then `drained`). */
async function drainageOf(buildId: string, deploymentName = DEPLOYMENT): Promise<string | undefined> {
  const version = JSON.parse(
    await deployment('describe-version', '--deployment-name', deploymentName, '--build-id', buildId),
  ) as { drainageInfo?: { drainageStatus?: string } };
  return version.drainageInfo?.drainageStatus;
}

async function makeCurrent(buildId: string, deploymentName = DEPLOYMENT): Promise<void> {
  await eventually(() =>
    deployment('set-current-version', '--deployment-name', deploymentName, '--build-id', buildId, '--yes'),
  );
}

/** Every workflow task and activity of the run: the process that ran it and the build recorded with each completed workflow task. */
async function executedBy(
  handle: WorkflowHandle,
): Promise<{ identities: Set<string>; builds: Set<string>; timers: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const identities = new Set<string>();
  const builds = new Set<string>();
  let timers = 0;
  for (const event of events) {
    const timeout = event.timerStartedEventAttributes?.startToFireTimeout;
    if (timeout && Number(timeout.seconds ?? 0) === 0 && timeout.nanos === 1_000_000) timers += 1;
    const identity =
      event.workflowTaskStartedEventAttributes?.identity ?? event.activityTaskStartedEventAttributes?.identity;
    if (identity) identities.add(identity.split('@')[0] as string);
    const completed = event.workflowTaskCompletedEventAttributes;
    if (completed) builds.add(completed.deploymentVersion?.buildId ?? '(none)');
  }
  return { identities, builds, timers };
}

async function versioningOf(handle: WorkflowHandle): Promise<{ behavior: string; buildId: string }> {
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  return {
    behavior: temporal.api.enums.v1.VersioningBehavior[info?.behavior ?? 0] ?? 'none',
    buildId: info?.deploymentVersion?.buildId ?? '(none)',
  };
}

test('runs started on build A finish on A while new runs go to build B; A drains and stops', async () => {
  const startedAt = Date.now();
  const bundleA = environment.environment['REACT_AGENT_WORKFLOW_BUNDLE'] as string;

  const workerA = await environment.startWorker({ REACT_AGENT_DEPLOYMENT_NAME: DEPLOYMENT });
  const buildA = buildIdOf(workerA);
  assert.equal(buildA, createHash('sha256').update(readFileSync(bundleA)).digest('hex').slice(0, 16));
  await makeCurrent(buildA);

  const runsA = await Promise.all(
    [1, 2, 3].map(() => environment.startRun({ question: 'Who sold more cars in 2024?' }, runId('build-a'))),
  );
  // In flight on A: each has asked for its second reply, which waits at the gate.
  await eventually(
    async () => assert.equal(runsA.filter((handle) => environment.requestsOf(handle.workflowId).length >= 2).length, 3),
    60_000,
  );

  // The runs pinned to A, as docs/deploys.md finds them.
  const pinnedToA = `TemporalWorkerDeploymentVersion = '${DEPLOYMENT}:${buildA}' AND ExecutionStatus = 'Running'`;
  await eventually(async () => assert.equal((await environment.client.workflow.count(pinnedToA)).count, 3), 30_000);

  const workerB = await environment.startWorker({
    REACT_AGENT_DEPLOYMENT_NAME: DEPLOYMENT,
    REACT_AGENT_WORKFLOW_BUNDLE: bundleB,
  });
  const buildB = buildIdOf(workerB);
  // The default build id is the bundle's hash: the changed workflow code is a new build.
  assert.equal(buildB, createHash('sha256').update(readFileSync(bundleB)).digest('hex').slice(0, 16));
  assert.notEqual(buildB, buildA);
  await makeCurrent(buildB);
  const described = await deployment('describe', '--name', DEPLOYMENT);
  assert.equal(described.includes(buildB), true);

  const runsB = await Promise.all(
    [1, 2, 3].map(() => environment.startRun({ question: 'Who sold more cars in 2024?' }, runId('build-b'))),
  );
  const resultsB = (await Promise.all(runsB.map((handle) => handle.result()))) as ResearchRunResult[];
  for (const result of resultsB) assert.equal(result.termination, 'answer');
  // B answered while A's runs were still waiting on A: A is draining, not drained.
  assert.equal(await drainageOf(buildA), 'draining');

  releaseA();
  const resultsA = (await Promise.all(runsA.map((handle) => handle.result()))) as ResearchRunResult[];
  for (const [index, result] of resultsA.entries()) {
    assert.equal(result.termination, 'answer');
    assert.equal(result.prediction, `Answered ${runsA[index]?.workflowId}.`);
    assert.deepEqual(protocolProblems(await environment.transcript(result)), []);
  }

  // Pinned, each run on its build; every task of it executed by its build's worker process.
  for (const [handles, worker, buildId] of [
    [runsA, workerA, buildA],
    [runsB, workerB, buildB],
  ] as const) {
    for (const handle of handles) {
      assert.deepEqual(await versioningOf(handle), { behavior: 'VERSIONING_BEHAVIOR_PINNED', buildId });
      const { identities, builds, timers } = await executedBy(handle);
      assert.deepEqual(
        [...identities],
        [String(worker.pid)],
        `${handle.workflowId} ran on ${[...identities].join(', ')}`,
      );
      assert.deepEqual([...builds], [buildId]);
      // B's changed code ran B's runs (its 1 ms timer), never A's.
      assert.equal(timers, worker === workerB ? 1 : 0, handle.workflowId);
    }
  }

  // A drains once its last run closed, and is stopped gracefully.
  await eventually(async () => assert.equal(await drainageOf(buildA), 'drained'), 60_000);
  assert.equal((await environment.client.workflow.count(pinnedToA)).count, 0);
  assert.equal(await workerA.stop(), 0);

  // With A gone, a new run is answered by B.
  const last = await environment.startRun({ question: 'Who sold more cars in 2024?' }, runId('build-b-last'));
  assert.equal(((await last.result()) as ResearchRunResult).termination, 'answer');
  assert.deepEqual([...(await executedBy(last)).identities], [String(workerB.pid)]);
  console.log(
    `worker versioning: 7 runs across builds ${buildA} → ${buildB} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
  );
}, 300_000);

test('a batch started on build A moves to build B (AUTO_UPGRADE); its run in flight finishes on A, the next ones start on B', async () => {
  // A deployment and task queue of its own (a task queue belongs to one deployment).
  const deploymentName = 'react-agent-test-batch';
  const taskQueue = `${environment.taskQueue}-nightly`;
  const workerA = await environment.startWorker({
    REACT_AGENT_DEPLOYMENT_NAME: deploymentName,
    REACT_AGENT_TASK_QUEUE: taskQueue,
  });
  const buildA = buildIdOf(workerA, deploymentName);
  await makeCurrent(buildA, deploymentName);

  const id = batchId('nightly');
  const items = questions(3);
  const batch = await environment.client.workflow.start<ResearchBatchWorkflow>(WorkflowTypes.researchBatch, {
    taskQueue,
    workflowId: id,
    args: [
      {
        input: await storeBatchInput(environment.store, items),
        questions: items.length,
        rollouts: 1,
        concurrency: 1,
        output: join(environment.directory, 'nightly'),
      },
    ],
  });
  const first = `${id}/q0-r1`;
  await eventually(async () => assert.ok(environment.requestsOf(first).length >= 2), 60_000);

  const workerB = await environment.startWorker({
    REACT_AGENT_DEPLOYMENT_NAME: deploymentName,
    REACT_AGENT_TASK_QUEUE: taskQueue,
    REACT_AGENT_WORKFLOW_BUNDLE: bundleB,
  });
  const buildB = buildIdOf(workerB, deploymentName);
  assert.notEqual(buildB, buildA);
  await makeCurrent(buildB, deploymentName);
  releaseBatchRun();

  const summary = await batch.result();
  assert.equal(summary.lines, 3);
  // The batch ended on B; its first tasks were A's, its last B's.
  assert.deepEqual(await versioningOf(batch), { behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: buildB });
  const batchTasks = await executedBy(batch);
  assert.deepEqual([...batchTasks.builds].sort(), [buildA, buildB].sort());
  // The run in flight at the deploy finished on A; the runs started after it on B (with B's changed code).
  for (const [index, worker, buildId] of [
    [0, workerA, buildA],
    [1, workerB, buildB],
    [2, workerB, buildB],
  ] as const) {
    const run = environment.client.workflow.getHandle(`${id}/q${index}-r1`);
    assert.equal(((await run.result()) as ResearchRunResult).termination, 'answer');
    assert.deepEqual(await versioningOf(run), { behavior: 'VERSIONING_BEHAVIOR_PINNED', buildId });
    const { identities, timers } = await executedBy(run);
    assert.deepEqual([...identities], [String(worker.pid)], `${run.workflowId} ran on ${[...identities].join(', ')}`);
    assert.equal(timers, worker === workerB ? 1 : 0, run.workflowId);
  }
  await eventually(async () => assert.equal(await drainageOf(buildA, deploymentName), 'drained'), 60_000);
  assert.equal(await workerA.stop(), 0);
}, 300_000);
