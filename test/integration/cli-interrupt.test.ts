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
import { readToolLog, waitForToolLog } from './support/tool-log';

/**
 * Ctrl-C in a terminal sends SIGINT to the whole foreground process group. `run` with a local
 * stack (its own dev server and worker) must cancel the run, wait until it has ended cancelled,
 * then stop what it started, and leave no process behind.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;
const directories: string[] = [];

beforeAll(async () => {
  // Only the scripted model server and the tool log are used; run starts its own Temporal stack.
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
}, 60_000);

describe('Ctrl-C during run with a local stack', () => {
  test(
    'SIGINT to the process group cancels the run, waits for it to end cancelled, then stops the dev server and worker',
    () =>
      withDefaultTemporalPort(async () => {
        assert.equal(await isServerReachable('127.0.0.1:7233', 1_000), false, 'this test needs port 7233 free');
        const dataDirectory = mkdtempSync(join(tmpdir(), 'react-agent-cli-interrupt-'));
        directories.push(dataDirectory);
        const id = scenarios.add(runId('cli-interrupt'), [
          toolCall('wait', { seconds: 90 }, 'Wait for the data.'),
          answer('Too late.'),
        ]);
        const cli = CliProcess.start(['run', 'Wait for the data, then answer.', '--id', id], {
          ownProcessGroup: true,
          environment: {
            ...environment.environment,
            TEMPORAL_ADDRESS: undefined,
            REACT_AGENT_DATA_DIR: dataDirectory,
            REACT_AGENT_TRANSCRIPT_DIR: undefined,
            REACT_AGENT_TASK_QUEUE: undefined,
          },
        });
        try {
          await cli.waitForStderr(/Starting a worker/);
          await waitForToolLog(
            environment.toolLog,
            id,
            (entries) => entries.some((entry) => entry.tool === 'wait' && entry.event === 'start'),
            120_000,
          );
          const started = descendantsOf(cli.pid);
          assert.ok(started.length >= 2, `run started a dev server and a worker (descendants: ${started.join(', ')})`);

          cli.kill('SIGINT');
          const { code } = await cli.exited;
          assert.equal(code, 130, cli.stderr);
          assert.match(cli.stderr, new RegExp(`Cancelling run ${id}`));
          assert.match(cli.stdout, /Ended: cancelled after 1 model calls, 1 tool calls/);
          assert.match(
            cli.stderr,
            /Stopping the worker this command started[\s\S]*Stopping the dev server this command started/,
          );

          const deadline = Date.now() + 10_000;
          while (started.some(isAlive) && Date.now() < deadline) await delay(100);
          assert.deepEqual(started.filter(isAlive), [], 'no process run started survives it');
          assert.ok(
            readToolLog(environment.toolLog, id).some(
              (entry) => entry.tool === 'wait' && entry.event === 'stop' && entry.reason === 'cancelled',
            ),
            'the running tool was cancelled through Temporal, not killed',
          );

          const stored = await runFromDatabase(join(dataDirectory, 'temporal.sqlite'), id);
          assert.equal(stored.status, 'COMPLETED');
          assert.equal(stored.result?.termination, 'cancelled');
        } finally {
          cli.kill('SIGKILL');
        }
      }),
    240_000,
  );
});
