import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import type { BatchSummary } from '../../src/core/batch-contract';
import { STACK_TOPOLOGY } from '../../src/config/stack-topology';
import type { StackWorker, WorkerMachine, WorkerRole } from '../../src/processes/production-stack/production-stack';
import { machineSupportProblem } from '../../src/processes/production-stack/worker-machine';
import { iterFileProblems, questions } from '../integration/support/batch-helpers';
import { Scenarios, answer, runId, toolCall } from '../integration/support/scenarios';
import type { ToolLogEntry } from '../integration/support/tool-log';
import { ClusterEnvironment } from './support/cluster-environment';
import { formatFaultTable } from './support/fault-table';

/*
 * Workers on separate machines, as `react-agent stack up --machines 3` makes them: three network
 * namespaces, each with its own veth pair, address and a relay on the host's end of its link, so
 * its workers reach Temporal, S3 and the model only over that link. The topology's seven workers
 * are dealt to them in turn: machine 1 gets a workflows, a model and a tools worker; every role
 * also runs on another machine. While a batch runs, machine 1's link is cut for 90 s
 * (`stack cut machine-1`'s operation): its activities time out and run elsewhere; when it is back
 * (`react-agent stack restore machine-1`) its workers poll again, and no question is written
 * twice. Then `down` deletes the namespaces and veth pairs and `up` makes them again.
 */

const CUT_SECONDS = 90;
const CUT_MACHINE = 'machine-1';
const root = resolve(__dirname, '../..');
const scenarios = new Scenarios();
let cluster: ClusterEnvironment;
let machines: WorkerMachine[] = [];
const setupLog: string[] = [];
const log = (line: string) => setupLog.push(`${new Date().toISOString().slice(11, 19)} ${line}`);
let cutOver = false;

beforeAll(async () => {
  const reason = machineSupportProblem();
  if (reason)
    throw new Error(
      `The worker-machine tests need network namespaces: ${reason}. Run the cluster tier as root on Linux with iproute2.`,
    );
  cluster = await ClusterEnvironment.start(scenarios.script, { workflows: 2, model: 2, tools: 3 }, log, {
    machines: 3,
  });
  machines = [...cluster.stack.machines];
}, 600_000);

afterAll(async () => {
  try {
    await cluster?.close();
  } finally {
    // close() ran `stack down`; the exit hook of ClusterEnvironment deletes them should the test die first.
    const left = machines.filter(
      (machine) => namespaceListed(machine.namespace) || interfaceExists(machine.hostInterface),
    );
    assert.deepEqual(
      left.map((machine) => machine.name),
      [],
      'every namespace and veth pair is gone at the end',
    );
  }
}, 180_000);

function stackCli(args: string[]) {
  return spawnSync(
    process.execPath,
    [join(root, 'bin/react-agent.js'), 'stack', ...args, '--dir', cluster.stack.directory],
    { encoding: 'utf8', timeout: 120_000 },
  );
}

function namespaceListed(namespace: string): boolean {
  return spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .some((line) => line.split(' ')[0] === namespace);
}

function interfaceExists(name: string): boolean {
  return spawnSync('ip', ['link', 'show', 'dev', name], { stdio: 'ignore' }).status === 0;
}

/** The namespace a process runs in, as `ip netns identify` names it. */
function namespaceOf(pid: number): string {
  return spawnSync('ip', ['netns', 'identify', String(pid)], { encoding: 'utf8' }).stdout.trim();
}

/** Whether a TCP connection from inside the namespace to host:port is accepted. */
function connectsFrom(namespace: string, host: string, port: number): boolean {
  return (
    spawnSync('ip', ['netns', 'exec', namespace, 'timeout', '10', 'bash', '-c', `exec 3<>/dev/tcp/${host}/${port}`], {
      stdio: 'ignore',
    }).status === 0
  );
}

function workersOn(machine: string): StackWorker[] {
  return cluster.stack.workers.filter((worker) => worker.machine === machine);
}

function pidOf(worker: StackWorker): number {
  const pid = cluster.stack.processOf(worker.name)?.pid;
  assert.ok(pid, `${worker.name} runs`);
  return pid;
}

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

/** The queue and kind of task a worker of `role` polls. */
function pollsFor(role: WorkerRole): { queue: string; type: temporal.api.enums.v1.TaskQueueType } {
  const queues = STACK_TOPOLOGY.workers.environment;
  const { TASK_QUEUE_TYPE_WORKFLOW: workflow, TASK_QUEUE_TYPE_ACTIVITY: activity } =
    temporal.api.enums.v1.TaskQueueType;
  if (role === 'workflows') return { queue: queues.REACT_AGENT_TASK_QUEUE as string, type: workflow };
  return {
    queue: (role === 'model' ? queues.REACT_AGENT_MODEL_TASK_QUEUE : queues.REACT_AGENT_TOOL_TASK_QUEUE) as string,
    type: activity,
  };
}

test('each machine is its own network: its workers run in its namespace and reach the stack only through its link', async () => {
  assert.deepEqual(
    machines.map((machine) => machine.name),
    ['machine-1', 'machine-2', 'machine-3'],
  );
  assert.equal(new Set(machines.map((machine) => machine.address)).size, 3, 'an address each');
  assert.deepEqual(
    workersOn(CUT_MACHINE)
      .map((worker) => worker.role)
      .sort(),
    ['model', 'tools', 'workflows'],
    'machine 1 runs every role',
  );
  for (const role of ['workflows', 'model', 'tools'] as const)
    assert.ok(
      cluster.stack.workers.some((worker) => worker.role === role && worker.machine !== CUT_MACHINE),
      `a ${role} worker is on another machine`,
    );

  const status = stackCli(['status']);
  assert.equal(status.status, 0, `${status.stdout}${status.stderr}`);
  for (const machine of machines)
    assert.match(
      status.stdout,
      new RegExp(
        `^${machine.name}\\s+\\d+\\s+ready\\s+${machine.address.replace(/\./g, '\\.')} \\(netns ${machine.namespace}`,
        'm',
      ),
    );
  const frontend = cluster.stack.ports.temporal.frontend.grpcPort;
  for (const worker of cluster.stack.workers) {
    const machine = machines.find((candidate) => candidate.name === worker.machine);
    assert.ok(machine, `${worker.name} is on a machine`);
    assert.match(
      status.stdout,
      new RegExp(
        `^${worker.name}\\s+${pidOf(worker)}\\s+running\\s+${machine.name} ${machine.address.replace(/\./g, '\\.')}$`,
        'm',
      ),
    );
    assert.equal(namespaceOf(pidOf(worker)), machine.namespace, `${worker.name} runs in ${machine.namespace}`);
    assert.ok(existsSync(join(cluster.stack.directory, 'workers', worker.name)), `${worker.name} has its data folder`);
  }
  for (const machine of machines) {
    assert.equal(
      connectsFrom(machine.namespace, '127.0.0.1', frontend),
      false,
      `${machine.name}'s loopback is its own: no frontend there`,
    );
    assert.equal(
      connectsFrom(machine.namespace, machine.hostAddress, frontend),
      true,
      `${machine.name} reaches the frontend through its link`,
    );
  }
  console.log(
    `cluster: worker machines\n${setupLog.join('\n')}\n${status.stdout}\n${machines.map((machine) => `${machine.name}: ${machine.namespace} ${machine.address} (host end ${machine.hostAddress})`).join('\n')}`,
  );
}, 120_000);

test(`machine 1 cut off for ${CUT_SECONDS} s during a batch: its activities run elsewhere, it comes back, no line twice`, async () => {
  const stack = cluster.stack;
  const cutWorkers = workersOn(CUT_MACHINE);
  const cutPids = new Set(cutWorkers.map(pidOf));
  const cutToolPid = pidOf(cutWorkers.find((worker) => worker.role === 'tools') as StackWorker);
  const otherToolPids = new Set(
    stack.workers.filter((worker) => worker.role === 'tools' && worker.machine !== CUT_MACHINE).map(pidOf),
  );

  const id = runId('machines-batch');
  const count = 8;
  for (let index = 0; index < count; index += 1) {
    scenarios.add(`${id}/q${index}-r1`, (turn) =>
      turn <= 4 || !cutOver
        ? {
            ...(turn % 2
              ? toolCall('lookup', { query: `m${index} ${turn}` })
              : toolCall('wait', { seconds: 3 + turn / 100 })),
            delayBeforeFirstChunkMs: 300,
          }
        : answer(`machine answer ${index}`),
    );
  }
  const chaosStart = Date.now();
  const batch = await cluster.startBatch(id, questions(count, 'Machine question'), {
    concurrency: count,
    run: { tools: ['lookup', 'wait'], limits: { maxModelCalls: 400 } },
  });
  const batchResult = cluster.resultOf<BatchSummary>(batch.handle, 900_000);
  batchResult.catch(() => undefined);

  // Cut while machine 1's tools worker has a call running.
  let open: ToolLogEntry | undefined;
  const deadline = Date.now() + 180_000;
  while (open === undefined) {
    assert.ok(Date.now() < deadline, 'machine 1 ran a tool within 3 minutes');
    const entries = toolLog();
    open = entries.find(
      (entry) =>
        entry.pid === cutToolPid &&
        entry.event === 'start' &&
        entry.tool === 'wait' &&
        !entries.some((other) => sameCall(other, entry) && other.event === 'stop'),
    );
    if (open === undefined) await delay(50);
  }
  const cutAt = Date.now();
  stack.cutMachine(CUT_MACHINE);
  const modelCallsBefore = cluster.model.requests.length;
  const cutHealth = (await stack.status()).find((row) => row.name === CUT_MACHINE)?.health;

  // Its running call times out (heartbeat) and runs on another machine's tools worker instead.
  let movedAfter: number | undefined;
  let movedTo: number | undefined;
  while (Date.now() - cutAt < CUT_SECONDS * 1000) {
    const moved =
      movedAfter === undefined
        ? toolLog().find(
            (entry) =>
              open !== undefined && sameCall(entry, open) && entry.event === 'start' && entry.pid !== cutToolPid,
          )
        : undefined;
    if (moved) {
      movedAfter = (Date.now() - cutAt) / 1000;
      movedTo = moved.pid;
    }
    await delay(250);
  }
  const startsOnCutMachineDuringCut = toolLog().filter(
    (entry) => cutPids.has(entry.pid) && entry.event === 'start' && entry.at > cutAt + 1_000 && entry.at < Date.now(),
  ).length;
  // Back through the command a user types; the link is up before it returns.
  const restoredAt = Date.now();
  const restore = stackCli(['restore', CUT_MACHINE]);
  assert.equal(restore.status, 0, `${restore.stdout}${restore.stderr}`);
  cutOver = true;

  // Back: each of machine 1's workers polls its queue again.
  const client = cluster.client;
  const pollingAgain = new Map<string, number>();
  while (pollingAgain.size < cutWorkers.length && Date.now() - restoredAt < 180_000) {
    for (const worker of cutWorkers) {
      if (pollingAgain.has(worker.name)) continue;
      const { queue, type } = pollsFor(worker.role);
      const response = await client.workflowService
        .describeTaskQueue({ namespace: stack.namespace, taskQueue: { name: queue }, taskQueueType: type })
        .catch(() => undefined);
      const poller = response?.pollers?.find((candidate) => candidate.identity?.startsWith(`${pidOf(worker)}@`));
      const lastAccess = Number(poller?.lastAccessTime?.seconds ?? 0) * 1000;
      if (poller && lastAccess >= restoredAt - 1_000) pollingAgain.set(worker.name, (Date.now() - restoredAt) / 1000);
    }
    if (pollingAgain.size < cutWorkers.length) await delay(1_000);
  }
  const pollsAgainAfter = pollingAgain.size === cutWorkers.length ? Math.max(...pollingAgain.values()) : undefined;

  const settled = (await Promise.allSettled([batchResult]))[0];
  const table = formatFaultTable(
    [
      {
        fault: `network cut ${CUT_MACHINE} (${machines[0]?.namespace})`,
        at: (cutAt - chaosStart) / 1000,
        downSeconds: (restoredAt - cutAt) / 1000,
        recoverySeconds: pollsAgainAfter ?? Number.NaN,
        resumedSeconds: pollsAgainAfter ?? Number.NaN,
        runsInFlight: count,
        modelCallsBefore,
      },
    ],
    {
      runs: [
        {
          id,
          ok: settled?.status === 'fulfilled',
          ...(settled?.status === 'fulfilled' ? { closedAt: (settled.value.closedAt - chaosStart) / 1000 } : {}),
        },
      ],
      faultsDone: (restoredAt - chaosStart) / 1000,
      modelCalls: cluster.model.requests.length,
    },
  );
  const summary =
    `${table}\nthe open call ${open.workflowId} ${open.callId} ran on another machine (pid ${movedTo ?? '-'}) after ${movedAfter?.toFixed(1) ?? 'never'} s; ` +
    `machine 1's workers polled again ${[...pollingAgain].map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', ') || 'never'} after the link came back; ` +
    `tool starts on machine 1 during the cut: ${startsOnCutMachineDuringCut}; its health while cut: ${cutHealth}`;
  console.log(`cluster: worker machines\n${summary}`);

  assert.equal(cutHealth, 'link cut', summary);
  assert.equal(
    settled?.status,
    'fulfilled',
    `${settled?.status === 'rejected' ? String(settled.reason) : ''}\n${summary}`,
  );
  if (settled?.status === 'fulfilled')
    assert.equal(settled.value.result.lines, count, JSON.stringify(settled.value.result));
  const lines = await cluster.iterLines(batch.prefix, 1);
  assert.deepEqual(iterFileProblems(lines, count, 1), [], summary);
  assert.deepEqual(
    lines.map((line) => line.prediction),
    Array.from({ length: count }, (_, index) => `machine answer ${index}`),
  );
  assert.ok(
    movedAfter !== undefined && movedAfter < 30,
    `the call machine 1 was running ran on another machine within 30 s\n${summary}`,
  );
  assert.ok(
    movedTo !== undefined && otherToolPids.has(movedTo),
    `it ran on another machine's tools worker\n${summary}`,
  );
  assert.equal(startsOnCutMachineDuringCut, 0, `machine 1 started no tool while cut off\n${summary}`);
  assert.ok(
    pollsAgainAfter !== undefined,
    `each of machine 1's workers polled again after the link came back\n${summary}`,
  );
  for (const worker of cutWorkers) assert.ok(stack.processOf(worker.name), `${worker.name} is still running`);
}, 900_000);

test('down deletes the namespaces and veth pairs; up makes them again with the workers in them', async () => {
  const stack = cluster.stack;
  const downStarted = Date.now();
  await stack.down();
  const downSeconds = (Date.now() - downStarted) / 1000;
  for (const machine of machines) {
    assert.equal(namespaceListed(machine.namespace), false, `${machine.namespace} deleted`);
    assert.equal(interfaceExists(machine.hostInterface), false, `${machine.hostInterface} deleted`);
  }
  const upStarted = Date.now();
  await stack.up();
  const upSeconds = (Date.now() - upStarted) / 1000;
  assert.deepEqual(
    stack.machines.map((machine) => machine.name),
    machines.map((machine) => machine.name),
  );
  for (const machine of stack.machines)
    assert.ok(
      namespaceListed(machine.namespace) && interfaceExists(machine.hostInterface),
      `${machine.name} made again`,
    );
  for (const worker of stack.workers)
    assert.equal(
      namespaceOf(pidOf(worker)),
      stack.machine(worker.machine as string).namespace,
      `${worker.name} runs in its machine again`,
    );
  machines = [...stack.machines];
  console.log(
    `cluster: worker machines\ndown ${downSeconds.toFixed(1)} s, up again ${upSeconds.toFixed(1)} s with ${stack.machines.length} machines and ${stack.workers.length} workers`,
  );
}, 600_000);
