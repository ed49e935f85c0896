import assert from 'node:assert/strict';
import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { loadMessageReferences } from '../../src/storage/conversation';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';

/**
 * `react-agent gc` against a real dev server and the local transcript directory. Close times are
 * real, so the test uses a short window: two runs close, the window passes, a newer run closes
 * and an open one (asking A's question again, so it shares A's question blob) waits in a tool.
 * Then every blob file is dated an hour back, so only references (not recency) protect them.
 */
const WINDOW = '20s';
const WINDOW_MS = 20_000;

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

function cli(argumentsList: string[]) {
  return CliProcess.complete(argumentsList, { environment: environment.environment, timeoutMs: 120_000 });
}

function blobFiles(): string[] {
  const directory = environment.store.directory;
  return readdirSync(directory)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .flatMap((shard) => readdirSync(join(directory, shard)).map((name) => join(directory, shard, name)))
    .sort();
}

async function finishedRun(label: string, question: string): Promise<ResearchRunResult> {
  const workflowId = scenarios.add(runId(label), [
    toolCall('lookup', { query: `${label} facts` }),
    answer(`${label} answer`),
  ]);
  return (await environment.startRun({ question }, workflowId)).result();
}

async function stored(reference: string): Promise<boolean> {
  try {
    await environment.store.getText(reference);
    return true;
  } catch (error) {
    if ((error as Error).name === 'TranscriptMissingError') return false;
    throw error;
  }
}

test("gc removes old closed runs' transcripts, keeps an open run's, a newer run's and a shared blob; --dry-run removes nothing", async () => {
  const alpha = await finishedRun('gc-old-alpha', 'Alpha: which blobs are old?');
  const beta = await finishedRun('gc-old-beta', 'Beta: also old?');
  const oldClosedAt = Date.now();
  const alphaMessages = await loadMessageReferences(environment.store, alpha.transcript);
  const betaMessages = await loadMessageReferences(environment.store, beta.transcript);
  const [systemPrompt, alphaQuestion] = alphaMessages as [string, string];
  assert.equal(betaMessages[0], systemPrompt, 'every run shares the system prompt blob');

  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 1_000));
  const delta = await finishedRun('gc-newer-delta', 'Delta: a newer run?');
  const newerClosedAt = Date.now();
  const openId = scenarios.add(runId('gc-open-gamma'), [toolCall('wait', { seconds: 120 })]);
  const open = await environment.startRun({ question: 'Alpha: which blobs are old?' }, openId);
  await waitForToolLog(environment.toolLog, openId, (entries) =>
    entries.some((entry) => entry.tool === 'wait' && entry.event === 'start'),
  );
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const file of blobFiles()) utimesSync(file, anHourAgo, anHourAgo);
  const before = blobFiles();

  const dryRun = await cli(['gc', '--older-than', WINDOW, '--dry-run']);
  assert.equal(dryRun.code, 0, dryRun.stderr);
  assert.match(
    dryRun.stdout,
    /^Dry run: nothing was removed\. Closed runs older than 20s \(closed before .*\): 2; open or newer runs: 2$/m,
  );
  // Kept: the open run's first manifest (system prompt + the same question) is alpha's first one.
  assert.match(dryRun.stdout, /^Manifests: [1-9]\d* would be removed, 1 kept$/m);
  assert.match(dryRun.stdout, /^Would free: /m);
  assert.deepEqual(blobFiles(), before, '--dry-run removed nothing');

  assert.ok(
    Date.now() - newerClosedAt < WINDOW_MS - 5_000,
    'the newer run is still inside the window when gc runs (machine too slow otherwise)',
  );
  const outcome = await cli(['gc', '--older-than', WINDOW, '--json']);
  assert.equal(outcome.code, 0, outcome.stderr);
  const summary = JSON.parse(outcome.stdout);
  expect(summary).toMatchObject({ dryRun: false, oldRuns: 2, keptRuns: 2, keptBecause: { recent: 0 } });
  assert.ok(summary.manifests.removed >= 2 && summary.blobs.removed >= 4, outcome.stdout);
  assert.ok(
    summary.keptBecause.referenced >= 3,
    "the system prompt, alpha's question and the first manifest are kept for the open run",
  );
  assert.ok(new Date(summary.cutoff).getTime() > oldClosedAt);
  assert.equal(blobFiles().length, before.length - summary.manifests.removed - summary.blobs.removed);

  for (const reference of [alpha.transcript, beta.transcript, ...alphaMessages.slice(2), ...betaMessages.slice(1)]) {
    assert.equal(await stored(reference), false, `${reference} of an old run is removed`);
  }
  assert.equal(await stored(systemPrompt), true, 'the shared system prompt stays');
  assert.equal(await stored(alphaQuestion), true, "alpha's question stays: the open run asked it again");
  const deltaMessages = await environment.transcript(delta);
  assert.equal(
    deltaMessages.at(-1)?.content.includes('gc-newer-delta answer'),
    true,
    "the newer run's transcript reads whole",
  );

  await open.cancel();
  const openResult = await open.result();
  assert.equal(openResult.termination, 'cancelled');
  const openMessages = await environment.transcript(openResult);
  assert.equal(
    openMessages[1]?.content.includes('Alpha: which blobs are old?'),
    true,
    'the open run finishes with a whole transcript',
  );

  const again = await cli(['gc', '--older-than', WINDOW, '--json']);
  assert.equal(again.code, 0, again.stderr);
  expect(JSON.parse(again.stdout)).toMatchObject({ manifests: { removed: 0 }, blobs: { removed: 0 }, bytesFreed: 0 });
}, 180_000);

test('bad arguments exit 2 with a clear message', async () => {
  const missing = await cli(['gc']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /gc needs --older-than, e\.g\. --older-than 30d\./);
  const malformed = await cli(['gc', '--older-than', 'a month']);
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /--older-than "a month" is not a duration such as 30d, 12h, 90m or 1h30m\./);
  assert.match(malformed.stderr, /Usage: react-agent gc/);
}, 60_000);
