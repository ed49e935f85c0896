import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, test } from '@jest/globals';
import { loadConversation } from '../../src/storage/conversation';
import { LocalDirectoryTranscriptStore } from '../../src/storage/local-directory-transcript-store';
import { isServerReachable } from '../../src/processes/dev-server';
import { readToolLog, waitForToolLog } from '../integration/support/tool-log';
import { CliProcess, commandLine, descendantsOf, isAlive, runFromDatabase } from '../integration/support/cli-process';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { transcriptProblems } from './support/transcript-checks';

// Ctrl-C during `react-agent run` with a local stack, against llama-server. A terminal sends
// SIGINT to the whole foreground process group; `run` must cancel the run, wait until it has
// ended `cancelled` (the open lookup answered), then stop the dev server and worker it started,
// and leave no process behind. The lookup works for 90 s, so the signal comes while it is open.
//
// `run` starts its stack on the default address, so this test needs localhost:7233 free (it
// waits up to 2 minutes for it). Only this file's llama-server and tool log are used; its own dev
// server stays idle.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const directories: string[] = [];
let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({ llamaServer: { grammar: 'deep-research.gbnf' } });
});

afterAll(async () => {
  await environment?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
}, 60_000);

test("SIGINT to run's process group cancels the run, which ends cancelled with its tool call answered, and nothing run started survives", async () => {
  // Another test's local stack (test/integration/cli-interrupt.test.ts) may hold the port for a while: wait for it.
  const portDeadline = Date.now() + 120_000;
  while ((await isServerReachable('127.0.0.1:7233', 1_000)) && Date.now() < portDeadline) await delay(1_000);
  assert.equal(
    await isServerReachable('127.0.0.1:7233', 1_000),
    false,
    'this test needs port 7233 free (run starts its own dev server there)',
  );
  const dataDirectory = mkdtempSync(join(tmpdir(), 'react-agent-real-cli-interrupt-'));
  directories.push(dataDirectory);
  const id = `real-cli-interrupt-${Date.now().toString(36)}`;
  const cli = CliProcess.start(['run', QUESTION, '--id', id, '--tools', 'lookup', '--max-calls', '6'], {
    ownProcessGroup: true,
    environment: {
      ...environment.environment,
      ...realServerToolsEnvironment({ lookupDelayMs: 90_000 }),
      // The local default: run starts a dev server and a worker of its own.
      TEMPORAL_ADDRESS: undefined,
      REACT_AGENT_TASK_QUEUE: undefined,
      REACT_AGENT_TRANSCRIPT_DIR: undefined,
      REACT_AGENT_DATA_DIR: dataDirectory,
    },
  });
  try {
    // Its own stack, or it would run on whatever took the port meanwhile (and give that server a worker): stop at once then.
    await cli.waitForStderr(/No Temporal server at|Starting a worker|started/);
    if (!/No Temporal server at localhost:7233; starting the local dev server/.test(cli.stderr)) {
      cli.kill('SIGKILL');
      assert.fail(`run did not start a dev server of its own (port 7233 was taken meanwhile):\n${cli.stderr}`);
    }
    await cli.waitForStderr(/Starting a worker/);
    await waitForToolLog(
      environment.toolLog,
      id,
      (entries) => entries.some((entry) => entry.event === 'start'),
      120_000,
    );
    const started = descendantsOf(cli.pid);
    assert.ok(
      started.length >= 2,
      `run started a dev server and a worker (its descendants: ${started.map(commandLine).join('; ')})`,
    );

    cli.kill('SIGINT');
    const { code } = await cli.exited;
    assert.equal(code, 130, `run exited ${code}:\n${cli.stderr}`);
    assert.match(cli.stderr, new RegExp(`Cancelling run ${id}`));
    assert.match(cli.stdout, /Ended: cancelled after 1 model calls, 1 tool calls/);

    const deadline = Date.now() + 10_000;
    while (started.some(isAlive) && Date.now() < deadline) await delay(100);
    assert.deepEqual(started.filter(isAlive).map(commandLine), [], 'no process run started survives it');

    // Cancelled through Temporal: the tool saw its cancellation (it was not killed with the worker).
    const stop = readToolLog(environment.toolLog, id).find((entry) => entry.event === 'stop');
    assert.equal(stop?.reason, 'cancelled');

    // The run as the stopped stack's database has it: completed, cancelled, its lookup answered.
    const stored = await runFromDatabase(join(dataDirectory, 'temporal.sqlite'), id);
    assert.equal(stored.status, 'COMPLETED');
    assert.equal(stored.result?.termination, 'cancelled');
    const messages = await loadConversation(
      new LocalDirectoryTranscriptStore(join(dataDirectory, 'transcripts')),
      stored.result?.transcript ?? '',
    );
    assert.deepEqual(transcriptProblems(messages, 'deep-research'), []);
    assert.equal(
      messages.at(-1)?.content,
      '<tool_response>\nNot completed: the run was cancelled while this tool call was open.\n</tool_response>',
    );
  } finally {
    cli.kill('SIGKILL');
  }
}, 360_000);
