import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { isServerReachable } from '../../src/processes/dev-server';
import { withDefaultTemporalPort } from './support/default-port-turn';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess, descendantsOf, isAlive, runFromDatabase } from './support/cli-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/** The CLI's output: closed while `run` goes on, or read slowly. */
const scenarios = new Scenarios();
let environment: AgentEnvironment;
const directories: string[] = [];

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
}, 60_000);

describe('the CLI output', () => {
  test(
    'when its output is closed (as by `| head`), run still sees its run to the end before stopping the stack it started',
    () =>
      withDefaultTemporalPort(async () => {
        assert.equal(await isServerReachable('127.0.0.1:7233', 1_000), false, 'this test needs port 7233 free');
        const dataDirectory = mkdtempSync(join(tmpdir(), 'react-agent-cli-output-'));
        directories.push(dataDirectory);
        const id = scenarios.add(runId('cli-closed-output'), [
          toolCall('wait', { seconds: 3 }, 'Wait a little.'),
          answer('Done waiting.'),
        ]);
        const cli = CliProcess.start(['run', 'Wait a little, then answer.', '--id', id], {
          environment: {
            ...environment.environment,
            TEMPORAL_ADDRESS: undefined,
            REACT_AGENT_DATA_DIR: dataDirectory,
            REACT_AGENT_TRANSCRIPT_DIR: undefined,
            REACT_AGENT_TASK_QUEUE: undefined,
          },
        });
        try {
          await cli.waitForStderr(new RegExp(`Run ${id} started`));
          const started = descendantsOf(cli.pid);
          // The reader goes away: every later write of the CLI fails with EPIPE.
          cli.child.stdout.destroy();
          cli.child.stderr.destroy();
          const { code } = await cli.exited;
          assert.equal(code, 0, `run exited ${code}`);
          const deadline = Date.now() + 10_000;
          while (started.some(isAlive) && Date.now() < deadline) await delay(100);
          assert.deepEqual(started.filter(isAlive), [], 'no process run started survives it');
          const stored = await runFromDatabase(join(dataDirectory, 'temporal.sqlite'), id);
          assert.equal(stored.status, 'COMPLETED');
          assert.equal(stored.result?.termination, 'answer');
        } finally {
          cli.kill('SIGKILL');
        }
      }),
    240_000,
  );

  test('a reader slower than the command still gets all of a large result', async () => {
    await environment.startWorker();
    const longAnswer = `Read it all. ${'The answer goes on. '.repeat(15_000)}`.trim();
    const id = scenarios.add(runId('cli-large-result'), [answer(longAnswer)]);
    await (await environment.startRun({ question: 'Read a long document.' }, id)).result();
    const cli = CliProcess.start(['result', id], { environment: environment.environment });
    // Read nothing until the command has finished writing (or 3 s have passed), as a busy pager would.
    cli.child.stdout.pause();
    await Promise.race([cli.exited, delay(3_000)]);
    cli.child.stdout.resume();
    const { code } = await cli.exited;
    assert.equal(code, 0, cli.stderr);
    assert.ok(cli.stdout.length > 300_000, `got ${cli.stdout.length} characters`);
    const parsed = JSON.parse(cli.stdout);
    assert.equal(parsed.prediction, longAnswer);
  }, 120_000);
});
