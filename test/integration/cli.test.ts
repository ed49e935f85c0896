import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { isServerReachable } from '../../src/processes/dev-server';
import { withDefaultTemporalPort } from './support/default-port-turn';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';

const root = resolve(__dirname, '../..');
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  milliseconds: number;
}

/** Runs `react-agent` as a user would, in its own process. */
function cli(
  argumentsList: string[],
  environmentOverrides: Record<string, string | undefined> = {},
  timeoutMs = 120_000,
): Promise<CliOutcome> {
  const started = Date.now();
  const variables: Record<string, string | undefined> = {
    ...process.env,
    ...environment.environment,
    ...environmentOverrides,
  };
  for (const [name, value] of Object.entries(variables)) if (value === undefined) delete variables[name];
  const child = spawn(process.execPath, [join(root, 'bin/react-agent.js'), ...argumentsList], {
    cwd: root,
    env: variables as NodeJS.ProcessEnv,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolveOutcome) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveOutcome({ code, stdout, stderr, milliseconds: Date.now() - started });
    }),
  );
}

test('run answers a question, printing progress lines and then the answer', async () => {
  const id = scenarios.add(runId('cli-run'), [
    toolCall('lookup', { query: 'BYD 2024' }, 'Look up BYD first.'),
    answer('BYD sold more, by about 2.48 million.'),
  ]);
  const output = join(environment.directory, 'cli-run.json');
  const outcome = await cli([
    'run',
    'Which company sold more cars in 2024, BYD or Tesla?',
    '--id',
    id,
    '--output',
    output,
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.match(outcome.stderr, new RegExp(`Run ${id} started`));
  assert.match(outcome.stderr, /thought: Look up BYD first\./);
  assert.match(outcome.stdout, /Ended: answer after 2 model calls, 1 tool calls/);
  assert.match(outcome.stdout, /Answer:\nBYD sold more, by about 2\.48 million\./);
  const written = JSON.parse(readFileSync(output, 'utf8'));
  assert.equal(written.prediction, 'BYD sold more, by about 2.48 million.');
  assert.equal(written.termination, 'answer');
  assert.deepEqual(
    written.messages.map((message: { role: string }) => message.role),
    ['system', 'user', 'assistant', 'user', 'assistant'],
  );
});

test('start, status, result, list and cancel work on a run by its id', async () => {
  const id = scenarios.add(runId('cli-start'), [toolCall('wait', { seconds: 60 })]);
  const started = await cli(['start', 'Wait for a long time', '--id', id, '--max-calls', '5']);
  assert.equal(started.code, 0, started.stderr);
  assert.equal(started.stdout.trim(), id);
  await waitForToolLog(environment.toolLog, id, (entries) => entries.some((entry) => entry.event === 'start'));

  const status = await cli(['status', id]);
  assert.equal(status.code, 0, status.stderr);
  const described = JSON.parse(status.stdout);
  assert.equal(described.status, 'RUNNING');
  assert.equal(described.progress.modelCalls, 1);
  assert.equal(described.progress.limits.maxModelCalls, 5);
  assert.equal(described.progress.remaining.modelCalls, 4);
  assert.deepEqual(described.progress.openToolCalls, ['wait({"seconds":60})']);

  const cancelled = await cli(['cancel', id]);
  assert.equal(cancelled.code, 0, cancelled.stderr);

  const result = await cli(['result', id]);
  assert.equal(result.code, 0, result.stderr);
  const parsed = JSON.parse(result.stdout);
  for (const field of [
    'question',
    'answer',
    'messages',
    'prediction',
    'termination',
    'usage',
    'iterations',
    'durationMs',
  ])
    assert.ok(field in parsed, `result has ${field}`);
  assert.equal(parsed.termination, 'cancelled');
  assert.match(parsed.messages.at(-1).content, /Not completed: the run was cancelled/);

  const listed = await cli(['list', '--query', `WorkflowId = '${id}'`]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`${id}\\tCOMPLETED\\tcancelled\\t1\\t`));
});

test('without a model endpoint, run says how to configure one and exits non-zero at once', async () => {
  const outcome = await cli(['run', 'anything'], {
    OPENAI_BASE_URL: undefined,
    OPENAI_API_KEY: undefined,
    REACT_AGENT_MODEL: undefined,
    OPENAI_MODEL: undefined,
  });
  assert.equal(outcome.code, 1);
  assert.match(outcome.stderr, /No model endpoint is configured.*OPENAI_BASE_URL.*REACT_AGENT_MODEL.*llama-server/s);
  const lines = outcome.stderr.trim().split('\n');
  for (const line of lines) assert.ok(line.length <= 100, `a line of ${line.length} characters: ${line}`);
  for (const server of ['OpenAI', 'vLLM', 'Ollama', 'llama-server'])
    assert.equal(
      lines.filter((line) => line.trimStart().startsWith(`${server}:`)).length,
      1,
      `one line with the ${server} example`,
    );
  assert.ok(outcome.milliseconds < 15_000);
});

test('with an unreachable model endpoint, run says so and exits non-zero without starting anything', async () => {
  const outcome = await cli(['run', 'anything'], { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  assert.equal(outcome.code, 1);
  assert.match(outcome.stderr, /The model endpoint http:\/\/127\.0\.0\.1:9\/v1 cannot be reached .*OPENAI_BASE_URL/s);
  for (const line of outcome.stderr.trim().split('\n'))
    assert.ok(line.length <= 100, `a line of ${line.length} characters: ${line}`);
  assert.ok(outcome.milliseconds < 15_000);
});

test('every command has --help, and bad usage exits 2 with the help', async () => {
  for (const command of [
    'run',
    'start',
    'follow',
    'status',
    'result',
    'cancel',
    'inject',
    'finish',
    'limits',
    'approve',
    'list',
    'kb',
    'server',
  ]) {
    const outcome = await cli([command, '--help']);
    assert.equal(outcome.code, 0);
    assert.match(outcome.stdout, new RegExp(`^Usage: react-agent ${command}`));
    assert.ok(
      outcome.stdout.endsWith('\n') && !outcome.stdout.endsWith('\n\n'),
      `${command} --help ends with ${JSON.stringify(outcome.stdout.slice(-20))}`,
    );
  }
  const overview = await cli(['--help']);
  assert.ok(
    overview.stdout.startsWith('Usage: react-agent <command>') && overview.stdout.endsWith('.\n'),
    JSON.stringify(overview.stdout.slice(-20)),
  );
  const bad = await cli(['run', 'q', '--max-calls', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /limits\.maxModelCalls must be an integer from 1 to 10000, got 0/);
});

test(
  'run with the default local address starts a dev server and a worker, answers, and stops both',
  () =>
    withDefaultTemporalPort(async () => {
      assert.equal(await isServerReachable('127.0.0.1:7233', 1_000), false, 'this test needs port 7233 free');
      const dataDirectory = mkdtempSync(join(tmpdir(), 'react-agent-cli-'));
      try {
        const id = scenarios.add(runId('cli-autostart'), [answer('Started everything myself.')]);
        const outcome = await cli(
          ['run', 'Can you start your own server?', '--id', id],
          {
            TEMPORAL_ADDRESS: undefined,
            REACT_AGENT_DATA_DIR: dataDirectory,
            REACT_AGENT_TRANSCRIPT_DIR: undefined,
            REACT_AGENT_WORKFLOW_BUNDLE: undefined,
            REACT_AGENT_TASK_QUEUE: undefined,
          },
          240_000,
        );
        assert.equal(outcome.code, 0, outcome.stderr);
        assert.match(outcome.stderr, /starting the local dev server/);
        assert.match(outcome.stderr, /Starting a worker/);
        assert.match(outcome.stdout, /Started everything myself\./);
        assert.equal(await isServerReachable('127.0.0.1:7233', 1_000), false, 'the dev server it started is stopped');
        assert.match(readFileSync(join(dataDirectory, 'worker.log'), 'utf8'), /react-agent worker:/);
      } finally {
        rmSync(dataDirectory, { recursive: true, force: true });
      }
    }),
  240_000,
);
