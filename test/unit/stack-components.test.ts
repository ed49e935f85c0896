import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { STACK_TOPOLOGY } from '../../src/config/stack-topology';
import { machineLayout } from '../../src/processes/production-stack/machine-addresses';
import { checkMachineCount, machineNamed } from '../../src/processes/production-stack/machine-fleet';
import { StackFolder, type StackState } from '../../src/processes/production-stack/stack-state';
import { portsToRelay, stackWorkerEnvironment } from '../../src/processes/production-stack/worker-environment';
import { workersWanted, type StackWorker } from '../../src/processes/production-stack/worker-placement';

/*
 * The decisions of the production stack's components that need no process: which workers `up`
 * wants, what a worker is told and which ports its machine's relay forwards, which machine a
 * name means, and the state file the components share.
 */

const directory = mkdtempSync(join(tmpdir(), 'react-agent-stack-components-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const fleets = [
  { role: 'workflows' as const, replicas: 2 },
  { role: 'model' as const, replicas: 1 },
];

describe('the workers up wants', () => {
  const current: StackWorker[] = [
    { name: 'worker-workflows-1', role: 'workflows' },
    { name: 'worker-model-1', role: 'model' },
  ];

  test('the ones there are, when nothing asks for a change', () => {
    assert.equal(
      workersWanted(current, { counts: undefined, machinesChanged: false, fleets, machines: [] }),
      undefined,
    );
  });

  test("none yet: each fleet's replicas", () => {
    assert.deepEqual(
      workersWanted([], { counts: undefined, machinesChanged: false, fleets, machines: [] })?.map((w) => w.name),
      ['worker-workflows-1', 'worker-workflows-2', 'worker-model-1'],
    );
  });

  test("counts given: those counts, in the fleets' order", () => {
    assert.deepEqual(
      workersWanted(current, { counts: { model: 2 }, machinesChanged: false, fleets, machines: [] })?.map(
        (w) => w.name,
      ),
      ['worker-model-1', 'worker-model-2'],
    );
  });

  test('the machines changed: as many of each role as now, dealt to the machines in turn', () => {
    assert.deepEqual(
      workersWanted(current, {
        counts: undefined,
        machinesChanged: true,
        fleets,
        machines: ['machine-1', 'machine-2'],
      }),
      [
        { name: 'worker-workflows-1', role: 'workflows', machine: 'machine-1' },
        { name: 'worker-model-1', role: 'model', machine: 'machine-2' },
      ],
    );
  });
});

describe('what a worker is told', () => {
  const settings = {
    given: { OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', REACT_AGENT_WORKER_ROLE: 'given-loses', EXTRA: 'kept' },
    temporalAddress: '127.0.0.1:7233',
    s3: { AWS_ENDPOINT_URL: 'http://127.0.0.1:8333', AWS_REGION: 'us-east-1' },
    dataDirectory: (worker: StackWorker) => `/stack/workers/${worker.name}`,
  };

  test("what up was given, under the topology's queues, the role's settings, Temporal, S3 and its own folder", () => {
    const environment = stackWorkerEnvironment({ name: 'worker-tools-2', role: 'tools' }, settings);
    const fleet = STACK_TOPOLOGY.workers.fleets.find((candidate) => candidate.role === 'tools');
    assert.equal(environment.EXTRA, 'kept');
    assert.equal(environment.REACT_AGENT_WORKER_ROLE, 'tools');
    assert.equal(environment.TEMPORAL_ADDRESS, '127.0.0.1:7233');
    assert.equal(environment.AWS_ENDPOINT_URL, 'http://127.0.0.1:8333');
    assert.equal(environment.REACT_AGENT_DATA_DIR, '/stack/workers/worker-tools-2');
    for (const [name, value] of Object.entries({ ...STACK_TOPOLOGY.workers.environment, ...fleet?.environment }))
      assert.equal(environment[name], value, name);
  });

  test("a machine's relay forwards every loopback port any role is given, each once, ascending", () => {
    const ports = portsToRelay((worker) => stackWorkerEnvironment(worker, settings));
    assert.deepEqual(ports, [7233, 8080, 8333]);
  });
});

describe('machines by name and number', () => {
  const machines = [machineLayout('0a1f', 7, 1), machineLayout('0a1f', 7, 2)];

  test('a machine by its name; another name is an error naming the machines there are', () => {
    assert.equal(machineNamed(machines, 'machine-2').address, '10.231.7.6');
    assert.throws(
      () => machineNamed(machines, 'machine-9'),
      /has no machine machine-9 \(its machines: machine-1, machine-2\)/,
    );
    assert.throws(() => machineNamed([], 'machine-1'), /it has none: 'stack up --machines N' makes them/);
  });

  test('0 machines needs nothing; a count out of range is refused before anything is asked of the host', () => {
    assert.doesNotThrow(() => checkMachineCount(0, true));
    assert.throws(() => checkMachineCount(65, true), /--machines must be 0 to 64, got 65/);
    assert.throws(() => checkMachineCount(1.5, false), /--machines must be 0 to 64, got 1.5/);
  });
});

describe('the state file the components share', () => {
  const initial = async (): Promise<StackState> => ({
    version: 1,
    ports: {
      postgres: 1,
      temporal: STACK_TOPOLOGY.temporal.services,
      ui: 2,
      s3: 3,
      seaweed: [4],
    } as StackState['ports'],
    secrets: { postgresSuperuser: 'a', temporal: 'b' },
    processes: {},
    workers: [],
    workerEnvironment: {},
  });

  test('a new stack saves its first state (mode 0600); a later open reads it back, records and all', async () => {
    const path = join(directory, 'stack');
    const folder = await StackFolder.open(path, initial);
    assert.equal(statSync(join(path, 'stack.json')).mode & 0o777, 0o600);
    assert.equal(folder.logFile('temporal-history'), join(path, 'logs', 'temporal-history.log'));
    folder.record('seaweedfs', { pid: 2 ** 22 + 1, startTicks: 1, command: 'weed mini' });
    const again = await StackFolder.open(path, () => Promise.reject(new Error('not a new stack')));
    assert.equal(again.state.processes.seaweedfs?.command, 'weed mini');
    assert.equal(again.running('seaweedfs'), undefined, 'a record whose process is gone is not running');
    again.forgetStopped();
    assert.deepEqual(JSON.parse(readFileSync(join(path, 'stack.json'), 'utf8')).processes, {});
  });
});
