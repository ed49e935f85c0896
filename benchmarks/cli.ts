/**
 * How fast the command line answers and a worker starts (issue 16), each beside `node -e 0` (what
 * starting Node alone costs) and beside the same thing from the TypeScript sources through tsx
 * (what a checkout whose sources are newer than dist/ runs, and what every command ran before):
 *
 *   npm run benchmark:cli                              (7 runs of each command, 5 worker starts)
 *   npm run benchmark:cli -- --repeat 11 --worker-repeat 5
 *
 * - `react-agent --help`: wall time of the whole process.
 * - `react-agent start "QUESTION"` against a dev server (DevServer, a free port) with a worker
 *   already polling (the scripted model server answers at once; only the command's time counts).
 * - `react-agent worker`: from spawn until the task queue shows its poller (describeTaskQueue,
 *   checked every 25 ms), with the workflow bundle built at install; and, for comparison, how long
 *   `bundleWorkflowCode` takes, which a worker with no prebuilt bundle spends before polling.
 *
 * Prints median and p95 (nearest rank) of each, the target (idle 2-core machine: --help ≤ 0.3 s,
 * start ≤ 1 s, worker polling ≤ 3 s) and the machine's load average beside every row. Needs a
 * current build (`npm run build`; `npm ci` makes one).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DevServer } from '../src/processes/dev-server';
import { ScriptedModelServer } from '../test/fakes/scripted-model-server';
import { argument, describeLoad, percentile } from './fleet-helpers';

const root = resolve(__dirname, '..');
const REPEAT = Number(argument('repeat', '7'));
const WORKER_REPEAT = Number(argument('worker-repeat', '5'));
const BIN = join(root, 'bin', 'react-agent.js');
const { compiledIsCurrent } = require('../bin/compiled-build.js') as { compiledIsCurrent: () => boolean };

/** Runs a command to its end; its wall time in seconds. Throws when it fails. */
function timeCommand(args: string[], environment: NodeJS.ProcessEnv = process.env): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd: root, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  return new Promise((resolveTime, reject) =>
    child.once('error', reject).once('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code === 0) resolveTime(seconds);
      else reject(new Error(`node ${args.join(' ')} exited ${code}:\n${output}`));
    }),
  );
}

async function repeat(times: number, once: (index: number) => Promise<number>): Promise<number[]> {
  const seconds: number[] = [];
  for (let index = 0; index < times; index += 1) seconds.push(await once(index));
  return seconds;
}

/** Whether a worker has polled `taskQueue` for workflow tasks. */
async function hasPoller(client: Client, taskQueue: string): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (response.pollers ?? []).length > 0;
}

/** Starts a worker process; resolves with the seconds until its queue shows a poller, and the process (to stop). */
async function startWorker(
  args: string[],
  client: Client,
  environment: NodeJS.ProcessEnv,
): Promise<{ seconds: number; stop: () => Promise<void> }> {
  const taskQueue = environment.REACT_AGENT_TASK_QUEUE as string;
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd: root, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 120_000;
  while (!(await hasPoller(client, taskQueue))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the worker (node ${args.join(' ')}) did not poll:\n${output}`);
    }
    await delay(25);
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, stop };
}

interface Row {
  what: string;
  seconds: number[];
  target?: number;
  load: string;
}

function printRows(rows: Row[]): void {
  const header = [
    '',
    'runs'.padStart(4),
    'median'.padStart(8),
    'p95'.padStart(8),
    'target'.padStart(8),
    '      ',
    '  load (1/5/15 min)',
  ];
  const width = Math.max(...rows.map((row) => row.what.length));
  console.log([header[0]?.padEnd(width), ...header.slice(1)].join('  '));
  for (const row of rows) {
    const median = percentile(row.seconds, 0.5);
    const p95 = percentile(row.seconds, 0.95);
    const verdict = row.target === undefined ? '' : median <= row.target ? 'met' : 'NOT met';
    console.log(
      [
        row.what.padEnd(width),
        String(row.seconds.length).padStart(4),
        `${median.toFixed(2)} s`.padStart(8),
        `${p95.toFixed(2)} s`.padStart(8),
        (row.target === undefined ? '' : `≤ ${row.target} s`).padStart(8),
        verdict.padEnd(7),
        ` ${row.load}`,
      ].join('  '),
    );
  }
}

async function main(): Promise<void> {
  if (!compiledIsCurrent()) {
    console.error(
      'dist/ is missing or older than the sources: run `npm run build` first (react-agent would run through tsx).',
    );
    process.exitCode = 1;
    return;
  }
  console.log(
    `react-agent start-up, ${REPEAT} runs of each command and ${WORKER_REPEAT} worker starts, one at a time; ${describeLoad()} at the start`,
  );
  console.log('');
  const rows: Row[] = [];
  const row = (what: string, seconds: number[], target?: number) =>
    rows.push({ what, seconds, load: describeLoad(), ...(target === undefined ? {} : { target }) });

  row('node -e 0 (Node alone)', await repeat(REPEAT, () => timeCommand(['-e', '0'])));
  row('react-agent --help', await repeat(REPEAT, () => timeCommand([BIN, '--help'])), 0.3);
  row(
    '  the same through tsx (sources)',
    await repeat(REPEAT, () => timeCommand(['--require', 'tsx/cjs', join(root, 'src/cli/main.ts'), '--help'])),
  );

  const directory = mkdtempSync(join(tmpdir(), 'react-agent-benchmark-cli-'));
  const server = await DevServer.start({ port: 0, uiPort: false, databaseFile: join(directory, 'temporal.sqlite') });
  const model = await ScriptedModelServer.start({
    script: () => ({ content: '<think>Known.</think>\n<answer>BYD sold more.</answer>' }),
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const environment = (taskQueue: string): NodeJS.ProcessEnv => ({
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'sk-benchmark',
    REACT_AGENT_MODEL: 'scripted-model',
    REACT_AGENT_TASK_QUEUE: taskQueue,
    REACT_AGENT_DATA_DIR: directory,
    REACT_AGENT_TRANSCRIPT_DIR: join(directory, 'transcripts'),
    REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
  });
  try {
    const startQueue = `benchmark-cli-start-${process.pid}`;
    const worker = await startWorker([BIN, 'worker'], client, environment(startQueue));
    try {
      const question = 'Which company sold more cars in 2024, BYD or Tesla?';
      row(
        'react-agent start (worker up)',
        await repeat(REPEAT, (index) =>
          timeCommand(
            [BIN, 'start', question, '--id', `benchmark-cli-${process.pid}-${index}`],
            environment(startQueue),
          ),
        ),
        1,
      );
      row(
        '  the same through tsx (sources)',
        await repeat(REPEAT, (index) =>
          timeCommand(
            [
              '--require',
              'tsx/cjs',
              join(root, 'src/cli/main.ts'),
              'start',
              question,
              '--id',
              `benchmark-cli-${process.pid}-tsx-${index}`,
            ],
            environment(startQueue),
          ),
        ),
      );
    } finally {
      await worker.stop();
    }

    const workerStart = async (args: string[], name: string, index: number) => {
      const started = await startWorker(args, client, environment(`benchmark-cli-${name}-${process.pid}-${index}`));
      await started.stop();
      return started.seconds;
    };
    row(
      'react-agent worker: spawn → polling',
      await repeat(WORKER_REPEAT, (index) => workerStart([BIN, 'worker'], 'worker', index)),
      3,
    );
    row(
      '  worker/main.ts through tsx (sources)',
      await repeat(WORKER_REPEAT, (index) =>
        workerStart(['--import', 'tsx', join(root, 'worker/main.ts')], 'tsx', index),
      ),
    );
    const bundling = async () => {
      const started = process.hrtime.bigint();
      await bundleWorkflowCode({
        workflowsPath: join(root, 'workflows', 'index.ts'),
        logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
      });
      return Number(process.hrtime.bigint() - started) / 1e9;
    };
    row('  + bundling workflows/ at start (no prebuilt bundle)', await repeat(1, bundling));
  } finally {
    await connection.close();
    await model.close();
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }

  printRows(rows);
  console.log('');
  console.log(
    'Wall time of each process from spawn to exit (--help, start) or until its poller shows on the task queue (worker), one at a time.',
  );
  console.log(
    'Targets (idle 2-core machine) are for the median; "+ bundling" is what a worker without dist/workflow-bundle.js spends before polling, besides its start.',
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
