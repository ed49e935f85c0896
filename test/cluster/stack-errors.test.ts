import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, test } from '@jest/globals';
import { ProductionStack } from '../../src/processes/production-stack/production-stack';

/*
 * What `react-agent stack` says when something it needs is missing or in the way: each message
 * names the problem and the fix, the exit code is 1, and nothing is left running.
 */

const root = resolve(__dirname, '../..');
const directory = mkdtempSync(join(tmpdir(), 'react-agent-stack-errors-'));
const stacks: ProductionStack[] = [];

afterAll(async () => {
  for (const stack of stacks) {
    await stack.down().catch(() => undefined);
    stack.killAllNow();
  }
  rmSync(directory, { recursive: true, force: true });
}, 120_000);

function stackCli(args: string[], environment: Record<string, string>) {
  return spawnSync(process.execPath, [join(root, 'bin/react-agent.js'), 'stack', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...environment },
    timeout: 120_000,
  });
}

function listen(port: number): Promise<Server> {
  return new Promise((resolveListen, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolveListen(server));
  });
}

test('no Temporal build: up says to run npm run setup:temporal-server', () => {
  const result = stackCli(['up', '--free-ports', '--dir', join(directory, 'no-build')], {
    REACT_AGENT_TEMPORAL_SERVER_DIR: join(directory, 'nothing-here'),
  });
  assert.equal(result.status, 1, result.stdout);
  assert.match(
    result.stderr,
    /react-agent stack: Temporal's server is not built: no .*nothing-here\/bin\/temporal-server\. Run 'npm run setup:temporal-server'/,
  );
});

test('no PostgreSQL: up names the missing initdb and how to install it', () => {
  const result = stackCli(['up', '--free-ports', '--dir', join(directory, 'no-postgres')], {
    REACT_AGENT_PG_BIN: join(directory, 'no-postgres-bin'),
  });
  assert.equal(result.status, 1, result.stdout);
  assert.match(result.stderr, /REACT_AGENT_PG_BIN=.*no-postgres-bin has no initdb/);
});

test('a bad command line is a usage error', () => {
  const result = stackCli(['sideways'], { REACT_AGENT_STACK_DIR: join(directory, 'never-created') });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /react-agent stack: say up, down, status, cut MACHINE or restore MACHINE/);
  const folder = join(directory, 'never-created');
  const workers = stackCli(['up', '--workers', 'gpu=2'], { REACT_AGENT_STACK_DIR: folder });
  assert.equal(workers.status, 2);
  assert.match(workers.stderr, /--workers: "gpu=2" is not role=count/);
  const machines = stackCli(['up', '--machines', 'many'], { REACT_AGENT_STACK_DIR: folder });
  assert.equal(machines.status, 2);
  assert.match(machines.stderr, /--machines: "many" is not a number of machines from 0 to 64/);
  const cut = stackCli(['cut'], { REACT_AGENT_STACK_DIR: folder });
  assert.equal(cut.status, 2);
  assert.match(cut.stderr, /react-agent stack cut: say which machine/);
  assert.equal(existsSync(folder), false, 'a wrong command line creates no stack folder');
});

function namespaces(): string[] {
  return spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((line) => line.split(' ')[0] as string)
    .filter(Boolean);
}

test('no ip on PATH: up --machines says iproute2 is missing, and makes no machine and starts nothing', () => {
  const emptyPath = join(directory, 'empty-path');
  mkdirSync(emptyPath);
  const before = namespaces();
  const folder = join(directory, 'no-ip');
  const result = stackCli(['up', '--free-ports', '--machines', '2', '--dir', folder], { PATH: emptyPath });
  assert.equal(result.status, 1, result.stdout);
  assert.match(
    result.stderr,
    /react-agent stack: --machines needs network namespaces: 'ip' \(iproute2\) is not on PATH \(.*empty-path\); install it: apt-get install iproute2/,
  );
  const state = JSON.parse(readFileSync(join(folder, 'stack.json'), 'utf8')) as {
    processes: Record<string, unknown>;
    machines?: unknown[];
  };
  assert.deepEqual(state.processes, {}, 'nothing started');
  assert.equal(state.machines, undefined, 'no machine recorded');
  assert.deepEqual(namespaces(), before, 'no namespace made');
});

test("ports in use: PostgreSQL's and then the history service's are named", async () => {
  const stack = await ProductionStack.open(join(directory, 'ports'), { freePorts: true });
  stacks.push(stack);
  const blocker = await listen(stack.ports.postgres);
  try {
    await assert.rejects(
      stack.up({ workers: { workflows: 0, model: 0, tools: 0 }, ui: false }),
      new RegExp(`Cannot start PostgreSQL: port ${stack.ports.postgres} on 127\\.0\\.0\\.1 is in use`),
    );
  } finally {
    blocker.close();
  }
  const historyBlocker = await listen(stack.ports.temporal.history.grpcPort);
  try {
    await assert.rejects(
      stack.up({ workers: { workflows: 0, model: 0, tools: 0 }, ui: false }),
      new RegExp(
        `Cannot start Temporal's history service: port ${stack.ports.temporal.history.grpcPort} on 127\\.0\\.0\\.1 is in use`,
      ),
    );
  } finally {
    historyBlocker.close();
  }
  // status says what runs (PostgreSQL) and what does not, and exits 1.
  const status = stackCli(['status', '--dir', stack.directory], {});
  assert.equal(status.status, 1, status.stderr);
  assert.match(status.stdout, /postgresql\s+\d+\s+ready/);
  assert.match(status.stdout, /temporal-history\s+-\s+stopped/);
}, 120_000);
