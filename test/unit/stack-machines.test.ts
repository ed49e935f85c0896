import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { parseStackCommandLine } from '../../src/cli/commands/stack-command';
import { UsageError } from '../../src/cli/usage-error';
import {
  chooseSubnet,
  machineLayout,
  MAX_MACHINES,
  preferredSubnet,
  subnetsInUse,
} from '../../src/processes/production-stack/machine-addresses';
import { environmentOnMachine, loopbackPorts } from '../../src/processes/production-stack/machine-environment';
import { machineSupportProblem } from '../../src/processes/production-stack/worker-machine';
import { placeWorkers, workerCounts } from '../../src/processes/production-stack/worker-placement';

/*
 * The parts of `react-agent stack up --machines N` that need no network: the names and addresses
 * of a stack's machines, how workers are dealt to them, what a worker on a machine is told, the
 * command line, and the reasons machines cannot be made.
 */

describe('machine addresses', () => {
  test('machine n of a stack has the n-th /30 of its /24, and names of its tag that fit an interface', () => {
    assert.deepEqual(machineLayout('0a1f', 7, 1), {
      name: 'machine-1',
      namespace: 'react-agent-0a1f-m1',
      hostInterface: 'ra0a1fm1h',
      machineInterface: 'ra0a1fm1n',
      hostAddress: '10.231.7.1',
      address: '10.231.7.2',
    });
    const last = machineLayout('ffff', 255, MAX_MACHINES);
    assert.equal(last.hostAddress, '10.231.255.253');
    assert.equal(last.address, '10.231.255.254');
    assert.ok(
      last.hostInterface.length <= 15 && last.machineInterface.length <= 15,
      'Linux interface names have 15 characters at most',
    );
    const addresses = Array.from({ length: MAX_MACHINES }, (_, index) => machineLayout('0a1f', 7, index + 1)).flatMap(
      (machine) => [machine.hostAddress, machine.address],
    );
    assert.equal(new Set(addresses).size, 2 * MAX_MACHINES, 'no two machines of a stack share an address');
    assert.throws(() => machineLayout('0a1f', 7, MAX_MACHINES + 1), RangeError);
    assert.throws(() => machineLayout('0a1f', 256, 1), RangeError);
    assert.throws(() => machineLayout('XYZ!', 7, 1), RangeError);
  });

  test('two stacks on one host: the second takes a subnet no interface uses', () => {
    const listing = [
      '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
      '4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0',
      '9: ra0a1fm1h    inet 10.231.31.1/30 scope global ra0a1fm1h',
      '11: ra0a1fm2h    inet 10.231.31.5/30 scope global ra0a1fm2h',
      '12: other    inet 10.232.32.1/30 scope global other',
    ].join('\n');
    assert.deepEqual([...subnetsInUse(listing)], [31]);
    assert.equal(preferredSubnet('0a1f'), 0x1f);
    assert.equal(
      chooseSubnet(subnetsInUse(listing), preferredSubnet('0a1f')),
      32,
      'the tag of the first stack points at its subnet: the next one is taken',
    );
    assert.equal(chooseSubnet(new Set([255]), 255), 0, 'wraps at 255');
    assert.equal(chooseSubnet(new Set(Array.from({ length: 256 }, (_, index) => index)), 3), undefined);
  });
});

describe('workers on machines', () => {
  const roles = ['workflows', 'model', 'tools'] as const;

  test("the topology's workers are dealt to three machines in turn: every role on two or more", () => {
    const workers = placeWorkers(roles, { workflows: 2, model: 2, tools: 3 }, ['machine-1', 'machine-2', 'machine-3']);
    assert.deepEqual(
      workers.map((worker) => `${worker.name}@${worker.machine}`),
      [
        'worker-workflows-1@machine-1',
        'worker-workflows-2@machine-2',
        'worker-model-1@machine-3',
        'worker-model-2@machine-1',
        'worker-tools-1@machine-2',
        'worker-tools-2@machine-3',
        'worker-tools-3@machine-1',
      ],
    );
    assert.deepEqual(workerCounts(workers), { workflows: 2, model: 2, tools: 3 });
  });

  test('without machines every worker is on the host; more machines than workers leaves some empty', () => {
    assert.deepEqual(placeWorkers(roles, { workflows: 1, tools: 1 }, []), [
      { name: 'worker-workflows-1', role: 'workflows' },
      { name: 'worker-tools-1', role: 'tools' },
    ]);
    assert.deepEqual(
      placeWorkers(roles, { model: 2 }, ['machine-1', 'machine-2', 'machine-3', 'machine-4']).map(
        (worker) => worker.machine,
      ),
      ['machine-1', 'machine-2'],
    );
  });

  test("a worker on a machine is given the host's end of its link wherever it was given loopback", () => {
    const environment = {
      TEMPORAL_ADDRESS: '127.0.0.1:21234',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:28333',
      OPENAI_BASE_URL: 'http://localhost:8080/v1',
      SEARCH_URL: 'https://127.0.0.1/search?q=x',
      REMOTE: 'https://api.example.com:8443/v1',
      NOT_A_URL: 'see 127.0.0.1:99 later',
      REACT_AGENT_DATA_DIR: '/tmp/stack/workers/worker-tools-1',
      UNSET: undefined,
    };
    assert.deepEqual(loopbackPorts(environment), [443, 8080, 21234, 28333]);
    assert.deepEqual(environmentOnMachine(environment, '10.231.7.1'), {
      TEMPORAL_ADDRESS: '10.231.7.1:21234',
      AWS_ENDPOINT_URL: 'http://10.231.7.1:28333',
      OPENAI_BASE_URL: 'http://10.231.7.1:8080/v1',
      SEARCH_URL: 'https://10.231.7.1:443/search?q=x',
      REMOTE: 'https://api.example.com:8443/v1',
      NOT_A_URL: 'see 127.0.0.1:99 later',
      REACT_AGENT_DATA_DIR: '/tmp/stack/workers/worker-tools-1',
    });
  });
});

describe('react-agent stack command line', () => {
  test('up --machines N, cut and restore MACHINE', () => {
    assert.deepEqual(
      parseStackCommandLine([
        'up',
        '--machines',
        '3',
        '--workers',
        'workflows=2,tools=1',
        '--dir',
        '/tmp/s',
        '--free-ports',
        '--no-ui',
      ]),
      {
        action: 'up',
        directory: '/tmp/s',
        freePorts: true,
        workers: { workflows: 2, tools: 1 },
        machines: 3,
        ui: false,
      },
    );
    assert.deepEqual(parseStackCommandLine(['up']), { action: 'up', freePorts: false, ui: true });
    assert.equal(parseStackCommandLine(['up', '--machines', '0']).machines, 0);
    assert.deepEqual(parseStackCommandLine(['cut', 'machine-2']), {
      action: 'cut',
      machine: 'machine-2',
      freePorts: false,
      ui: true,
    });
    assert.equal(parseStackCommandLine(['restore', 'machine-2', '--dir', 'x']).machine, 'machine-2');
  });

  test('what it does not understand is a usage error', () => {
    const usage = (args: string[], message: RegExp) =>
      assert.throws(
        () => parseStackCommandLine(args),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
      );
    usage(['up', '--machines', 'three'], /--machines: "three" is not a number of machines from 0 to 64/);
    usage(['up', '--machines', '65'], /from 0 to 64/);
    usage(['up', '--machines=-1'], /--machines: "-1"/);
    usage(['up', '--machines', '-1'], /Option '--machines' argument is ambiguous/);
    usage(['up', '--sideways'], /Unknown option '--sideways'/);
    usage(['cut'], /stack cut: say which machine/);
    usage(['restore', 'machine-1', 'machine-2'], /stack restore: say which machine/);
    usage(['status', 'machine-1'], /say up, down, status, cut MACHINE or restore MACHINE/);
    usage(['sideways'], /say up, down, status/);
  });
});

describe('why machines cannot be made', () => {
  test('not root', () => {
    assert.match(
      machineSupportProblem(process.env, 1000) ?? '',
      /network namespaces need root, and this runs as uid 1000/,
    );
  });

  test('no ip on PATH', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-ip-'));
    try {
      assert.match(
        machineSupportProblem({ PATH: empty }, 0) ?? '',
        /'ip' \(iproute2\) is not on PATH .*install it: apt-get install iproute2/,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
