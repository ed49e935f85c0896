import assert from 'node:assert/strict';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { measureDirectories } from '../../activities/tools/python/directory-usage';
import { spawnTypescript } from '../../src/processes/typescript-process';
import { workerProcessEnvironment } from '../../src/processes/worker-process-environment';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { historyText } from '../integration/support/mcp-servers';
import { answer, runId, Scenarios, toolCall } from '../integration/support/scenarios';

/*
 * Issue 28 #9 and #14: the python tool's sandbox against a model that fills the disk and one
 * that writes into a descriptor the worker holds. The worker is started here (not through
 * AgentEnvironment.startWorker) so that it holds file descriptor 200 open on a file without
 * close-on-exec, as a worker does that a wrapper script started under `flock 200`; its TMPDIR
 * is a folder of this test, so the disk its python calls use can be measured while they run.
 */

const QUOTA_MIB = 256; // the default of REACT_AGENT_PYTHON_MAX_WRITE_MB

const scenarios = new Scenarios();
let environment: AgentEnvironment;
let scratch: string;
let workerTemporaryDirectory: string;
let descriptorFile: string;
let worker: ChildProcess;
let workerOutput = '';

function workerAlive(): boolean {
  return worker.exitCode === null && worker.signalCode === null;
}

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  scratch = mkdtempSync(join(tmpdir(), 'react-agent-hostile-python-'));
  workerTemporaryDirectory = join(scratch, 'tmp');
  mkdirSync(workerTemporaryDirectory);
  descriptorFile = join(scratch, 'worker-descriptor-200.log');
  const descriptor = openSync(descriptorFile, 'w');
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', ...new Array<'ignore'>(197).fill('ignore'), descriptor];
  worker = spawnTypescript('worker/main.ts', {
    // As every worker the project starts: with its memory settings (src/processes/worker-process-environment.ts).
    env: workerProcessEnvironment({
      ...process.env,
      ...environment.environment,
      REACT_AGENT_TOOLS: 'python',
      TMPDIR: workerTemporaryDirectory,
    }),
    stdio,
  });
  closeSync(descriptor);
  worker.stdout?.on('data', (data: Buffer) => (workerOutput += data.toString()));
  worker.stderr?.on('data', (data: Buffer) => (workerOutput += data.toString()));
  const deadline = Date.now() + 90_000;
  while (!workerOutput.includes('react-agent worker:')) {
    if (!workerAlive() || Date.now() > deadline) throw new Error(`worker did not start:\n${workerOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}, 180_000);

afterAll(async () => {
  if (worker && workerAlive()) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;
  }
  await environment?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function runPython(
  label: string,
  code: string,
): Promise<{ observation: string; termination: string; history: string }> {
  const workflowId = scenarios.add(runId(label), [toolCall('python', { code }), answer('done')]);
  const result = await (await environment.startRun({ question: 'Compute something.' }, workflowId)).result();
  const observation = String(environment.requestsOf(workflowId)[1]?.messages.at(-1)?.content ?? '');
  const history = historyText(await environment.client.workflow.getHandle(workflowId).fetchHistory());
  return { observation, termination: result.termination, history };
}

describe('python: total writes and inherited descriptors', () => {
  test('writing 8 × 64 MiB to /tmp and /sandbox stops at the write quota; the host disk stays bounded; the worker lives', async () => {
    const code = [
      'import os',
      'written = 0',
      'for part in range(8):',
      '    with open(os.path.join("/tmp" if part % 2 else "/sandbox", f"fill{part}.bin"), "wb") as file:',
      '        for _ in range(8):',
      '            file.write(b"x" * (8 << 20))',
      '            written += 8',
      'print("wrote", written, "MiB")',
    ].join('\n');
    let largestOnDisk = 0;
    let measuring = true;
    const sampler = (async () => {
      while (measuring) {
        const usage = await measureDirectories([workerTemporaryDirectory], 1_000_000);
        largestOnDisk = Math.max(largestOnDisk, usage.bytes);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const { observation, termination } = await runPython('hostile-python-fill', code).finally(
      () => (measuring = false),
    );
    await sampler;

    assert.equal(termination, 'answer');
    assert.doesNotMatch(observation, /wrote 512 MiB/);
    assert.match(observation, new RegExp(`write quota of ${QUOTA_MIB} MiB`), observation);
    assert.ok(
      largestOnDisk <= (QUOTA_MIB + 64) * 1024 ** 2,
      `the call directories held ${(largestOnDisk / 1024 ** 2).toFixed(0)} MiB on the host's disk`,
    );
    assert.deepEqual(
      [...readdirSync(workerTemporaryDirectory).filter((name) => name.startsWith('react-agent-python-'))],
      [],
      'the call directory is removed',
    );
    assert.ok(workerAlive(), 'the worker is alive');
  }, 180_000);

  test("a write to the worker's descriptor 200 fails inside the sandbox; the worker's file stays empty", async () => {
    const code = [
      'import os',
      'try:',
      '    os.write(200, b"ESCAPED-FROM-THE-SANDBOX")',
      '    print("wrote into descriptor 200")',
      'except OSError as error:',
      '    print("descriptor 200:", error.strerror)',
      'print("open descriptors:", sorted(int(name) for name in os.listdir("/proc/self/fd")))',
    ].join('\n');
    const { observation, termination, history } = await runPython('hostile-python-descriptor', code);

    assert.equal(termination, 'answer');
    assert.match(observation, /descriptor 200: Bad file descriptor/);
    // 0–2, and 3: the listing's own
    assert.match(observation, /open descriptors: \[0, 1, 2, 3\]/);
    assert.equal(readFileSync(descriptorFile, 'utf8'), '', "nothing reached the worker's file");
    assert.doesNotMatch(observation, /^wrote into descriptor 200$/m);
    assert.match(history, /descriptor 200: Bad file descriptor/, 'the decoded history holds the observation');
    assert.ok(workerAlive(), 'the worker is alive');
  }, 180_000);
});
