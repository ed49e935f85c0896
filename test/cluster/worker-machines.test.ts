import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import type { BatchSummary } from '../../src/core/batch-contract';
import { STACK_TOPOLOGY } from '../../src/config/stack-topology';
import { iterFileProblems, questions } from '../integration/support/batch-helpers';
import { Scenarios, answer, runId, toolCall } from '../integration/support/scenarios';
import type { ToolLogEntry } from '../integration/support/tool-log';
import { ClusterEnvironment } from './support/cluster-environment';
import { formatFaultTable } from './support/fault-table';
import { namespacesUnavailable, WorkerMachine } from './support/worker-machine';

/*
 * Workers on separate "machines": three network namespaces, each with its own veth pair,
 * address and data folder, reaching Temporal, S3 and the model only over that link. Machine 1
 * runs every role, machine 2 the model calls, machine 3 the tools; one workflows worker stays on
 * the host. While a batch runs, machine 1's link goes down for 90 s: its activities time out and
 * run elsewhere; when it comes back it polls again, and no question is written twice.
 */

const CUT_SECONDS = 90;
const scenarios = new Scenarios();
let cluster: ClusterEnvironment;
const machines: WorkerMachine[] = [];
const setupLog: string[] = [];
const log = (line: string) => setupLog.push(`${new Date().toISOString().slice(11, 19)} ${line}`);
let cutOver = false;

beforeAll(async () => {
  const reason = namespacesUnavailable();
  if (reason) throw new Error(`The worker-machine tests need network namespaces: ${reason}. Run the cluster tier as root on Linux with iproute2.`);
  cluster = await ClusterEnvironment.start(scenarios.script, { workflows: 1, model: 0, tools: 0 }, log);
  const roles = ['all', 'model', 'tools'] as const;
  for (const index of roles.keys()) {
    const machine = WorkerMachine.create(index + 1);
    machines.push(machine);
    for (const port of [cluster.stack.ports.temporal.frontend.grpcPort, cluster.stack.ports.s3, Number(new URL(cluster.model.baseUrl).port)]) await machine.relay(port);
  }
  // Started one at a time: three workers loading at once on 2 cores take long to poll.
  for (const [index, role] of roles.entries()) {
    const machine = machines[index] as WorkerMachine;
    await cluster.stack.addWorker(
      {
        name: machine.name,
        role,
        netns: machine.namespace,
        hostAddress: machine.hostAddress,
        environment: { OPENAI_BASE_URL: cluster.model.baseUrl.replace('127.0.0.1', machine.hostAddress) },
      },
      log,
    );
  }
}, 400_000);

afterAll(async () => {
  try {
    await cluster?.close();
  } finally {
    for (const machine of machines) machine.destroy();
  }
}, 120_000);

function toolLog(): ToolLogEntry[] {
  if (!existsSync(cluster.toolLog)) return [];
  return readFileSync(cluster.toolLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ToolLogEntry);
}

/** The same tool call: call ids are numbered within a run. */
function sameCall(a: ToolLogEntry, b: ToolLogEntry): boolean {
  return a.workflowId === b.workflowId && a.callId === b.callId;
}

test('each machine is its own network: a worker in it reaches the stack only through its link', async () => {
  const rows = await cluster.stack.status();
  for (const machine of machines) {
    const row = rows.find((candidate) => candidate.name === machine.name);
    assert.equal(row?.running, true, `${machine.name}: ${JSON.stringify(row)}\n${setupLog.join('\n')}`);
    assert.equal(row?.address, `netns ${machine.namespace}`);
  }
  console.log(
    `cluster: worker machines\n${setupLog.join('\n')}\n${machines.map((machine) => `${machine.name}: ${machine.namespace} ${machine.address} (host side ${machine.hostAddress})`).join('\n')}`,
  );
}, 60_000);

test(`machine 1 cut off for ${CUT_SECONDS} s during a batch: its activities run elsewhere, it comes back, no line twice`, async () => {
  const stack = cluster.stack;
  const cutMachine = machines[0] as WorkerMachine;
  const cutPid = stack.processOf(cutMachine.name)?.pid;
  assert.ok(cutPid, 'machine 1 runs');

  const id = runId('machines-batch');
  const count = 8;
  for (let index = 0; index < count; index += 1) {
    scenarios.add(`${id}/q${index}-r1`, (turn) =>
      turn <= 4 || !cutOver
        ? { ...(turn % 2 ? toolCall('lookup', { query: `m${index} ${turn}` }) : toolCall('wait', { seconds: 3 + turn / 100 })), delayBeforeFirstChunkMs: 300 }
        : answer(`machine answer ${index}`),
    );
  }
  const chaosStart = Date.now();
  const batch = await cluster.startBatch(id, questions(count, 'Machine question'), { concurrency: count, run: { tools: ['lookup', 'wait'], limits: { maxModelCalls: 400 } } });
  const batchResult = cluster.resultOf<BatchSummary>(batch.handle, 900_000);
  batchResult.catch(() => undefined);

  // Cut while machine 1 has a tool call running.
  let open: ToolLogEntry | undefined;
  const deadline = Date.now() + 120_000;
  while (open === undefined) {
    assert.ok(Date.now() < deadline, 'machine 1 ran a tool within 2 minutes');
    const entries = toolLog();
    open = entries.find((entry) => entry.pid === cutPid && entry.event === 'start' && entry.tool === 'wait' && !entries.some((other) => sameCall(other, entry) && other.event === 'stop'));
    if (open === undefined) await delay(50);
  }
  const cutAt = Date.now();
  cutMachine.cut();
  const modelCallsBefore = cluster.model.requests.length;

  // Its running call times out (heartbeat) and runs on machine 3 instead.
  let movedAfter: number | undefined;
  while (Date.now() - cutAt < CUT_SECONDS * 1000) {
    if (movedAfter === undefined && toolLog().some((entry) => open !== undefined && sameCall(entry, open) && entry.event === 'start' && entry.pid !== cutPid)) movedAfter = (Date.now() - cutAt) / 1000;
    await delay(250);
  }
  const startsOnCutMachineDuringCut = toolLog().filter((entry) => entry.pid === cutPid && entry.event === 'start' && entry.at > cutAt + 1_000 && entry.at < Date.now()).length;
  cutMachine.restore();
  const restoredAt = Date.now();
  cutOver = true;

  // Back: machine 1 polls the main queue again.
  const client = cluster.client;
  let pollsAgainAfter: number | undefined;
  while (pollsAgainAfter === undefined && Date.now() - restoredAt < 180_000) {
    const response = await client.workflowService
      .describeTaskQueue({
        namespace: stack.namespace,
        taskQueue: { name: STACK_TOPOLOGY.workers.environment.REACT_AGENT_TASK_QUEUE as string },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      })
      .catch(() => undefined);
    const poller = response?.pollers?.find((candidate) => candidate.identity?.startsWith(`${cutPid}@`));
    const lastAccess = Number(poller?.lastAccessTime?.seconds ?? 0) * 1000;
    if (poller && lastAccess >= restoredAt - 1_000) pollsAgainAfter = (Date.now() - restoredAt) / 1000;
    else await delay(1_000);
  }

  const settled = (await Promise.allSettled([batchResult]))[0];
  const table = formatFaultTable(
    [
      {
        fault: `network cut ${cutMachine.name} (${cutMachine.namespace})`,
        at: (cutAt - chaosStart) / 1000,
        downSeconds: (restoredAt - cutAt) / 1000,
        recoverySeconds: pollsAgainAfter ?? Number.NaN,
        resumedSeconds: pollsAgainAfter ?? Number.NaN,
        runsInFlight: count,
        modelCallsBefore,
      },
    ],
    {
      runs: [{ id, ok: settled?.status === 'fulfilled', ...(settled?.status === 'fulfilled' ? { closedAt: (settled.value.closedAt - chaosStart) / 1000 } : {}) }],
      faultsDone: (restoredAt - chaosStart) / 1000,
      modelCalls: cluster.model.requests.length,
    },
  );
  const summary = `${table}\nthe open call ${open.workflowId} ${open.callId} ran elsewhere after ${movedAfter?.toFixed(1) ?? 'never'} s; machine 1 polled again ${pollsAgainAfter?.toFixed(1) ?? 'never'} s after the link came back; tool starts on machine 1 during the cut: ${startsOnCutMachineDuringCut}`;
  console.log(`cluster: worker machines\n${summary}`);

  assert.equal(settled?.status, 'fulfilled', `${settled?.status === 'rejected' ? String(settled.reason) : ''}\n${summary}`);
  if (settled?.status === 'fulfilled') assert.equal(settled.value.result.lines, count, JSON.stringify(settled.value.result));
  const lines = await cluster.iterLines(batch.prefix, 1);
  assert.deepEqual(iterFileProblems(lines, count, 1), [], summary);
  assert.deepEqual(
    lines.map((line) => line.prediction),
    Array.from({ length: count }, (_, index) => `machine answer ${index}`),
  );
  assert.ok(movedAfter !== undefined && movedAfter < 30, `the call machine 1 was running ran on another machine within 30 s\n${summary}`);
  assert.equal(startsOnCutMachineDuringCut, 0, `machine 1 started no tool while cut off\n${summary}`);
  assert.ok(pollsAgainAfter !== undefined, `machine 1 polled again after the link came back\n${summary}`);
  assert.ok(stack.processOf(cutMachine.name), 'machine 1 is still running');
}, 900_000);
