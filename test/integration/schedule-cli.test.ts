import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { BatchSummary } from '../../src/core/batch-contract';
import { AgentEnvironment } from './support/agent-environment';
import { answerReply, iterFileProblems, iterLines, pairOf, toolReply, turnOf, waitFor } from './support/batch-helpers';
import { CliProcess } from './support/cli-process';

let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: (request) => {
      const pair = pairOf(request);
      if (!pair) return { status: 500, errorMessage: 'not a batch run' };
      return turnOf(request) === 1
        ? toolReply('lookup', { query: `q${pair.index}` })
        : answerReply(`A${pair.index}-r${pair.rollout}`);
    },
  });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

async function cli(argumentsList: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process = CliProcess.start(argumentsList, { environment: environment.environment, timeoutMs: 120_000 });
  const { code } = await process.exited;
  return { code, stdout: process.stdout, stderr: process.stderr };
}

/** The result of a batch a schedule starts, once it exists and ends. */
async function scheduledBatch(batchId: string): Promise<BatchSummary> {
  const handle = environment.client.workflow.getHandle(batchId);
  await waitFor(
    `the scheduled batch ${batchId}`,
    () =>
      handle.describe().then(
        () => true,
        () => false,
      ),
    60_000,
  );
  return (await handle.result()) as BatchSummary;
}

function checkOutput(folder: string, rollouts: number): void {
  for (let rollout = 1; rollout <= rollouts; rollout += 1) {
    const lines = iterLines(folder, rollout);
    assert.deepEqual(iterFileProblems(lines, 3, rollout), []);
    assert.ok(lines.every((line) => line.termination === 'answer' && line.prediction === `A${line.index}-r${rollout}`));
  }
  assert.ok(existsSync(join(folder, 'summary.json')));
}

test('a schedule created, described, triggered, backfilled over two nights, paused, unpaused, updated and deleted through the CLI', async () => {
  const id = `nightly-${process.pid}`;
  const input = join(environment.directory, 'nightly.jsonl');
  writeFileSync(
    input,
    ['{"question":"First?","answer":"1"}', '{"question":"Second?"}', '{"question":"Third?"}'].join('\n'),
  );
  const output = join(environment.directory, 'scheduled');

  const created = await cli([
    'schedule',
    'create',
    id,
    '--input',
    input,
    '--output',
    output,
    '--cron',
    '0 3 * * *',
    '--rollouts',
    '2',
    '--concurrency',
    '3',
    '--max-calls',
    '4',
  ]);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stdout.trim(), id);
  assert.match(
    created.stderr,
    new RegExp(`Schedule ${id} created: 3 questions × 2 rollouts → ${output}/${id}/<scheduled time>/`),
  );
  rmSync(input); // the schedule runs its stored copy

  const described = JSON.parse((await cli(['schedule', 'describe', id])).stdout);
  assert.equal(described.state.paused, false);
  assert.deepEqual(described.spec, { cron: '0 3 * * *', timezone: 'UTC' });
  assert.equal(described.policies.overlap, 'skip');
  assert.equal(described.policies.pauseOnFailure, false);
  assert.equal(described.batch.questions, 3);
  assert.equal(described.batch.rollouts, 2);
  assert.deepEqual(described.batch.run, { limits: { maxModelCalls: 4 } });
  assert.match(described.batch.input, /^sha256:[0-9a-f]{64}$/);
  assert.ok(described.nextRuns.length >= 1);
  for (const next of described.nextRuns) assert.match(next, /T03:00:00\.000Z$/, 'every next run is at 03:00 UTC');

  const listed = await cli(['schedule', 'list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    new RegExp(`^${id}\\tactive\\tcron 0 3 \\* \\* \\*\\t\\S+T03:00:00\\.000Z\\t${output}/${id}$`, 'm'),
  );

  // Trigger: a batch now, in the folder of its scheduled start time.
  const triggered = await cli(['schedule', 'trigger', id]);
  assert.equal(triggered.code, 0, triggered.stderr);
  let batchId = '';
  await waitFor(
    'the triggered batch in describe',
    async () => {
      const now = JSON.parse((await cli(['schedule', 'describe', id])).stdout);
      batchId = now.recentBatches[0]?.batchId ?? '';
      return batchId !== '';
    },
    60_000,
  );
  assert.match(batchId, new RegExp(`^${id}-\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$`));
  const now = await scheduledBatch(batchId);
  const stamp = batchId.slice(id.length + 1).replace(/:/g, '-');
  assert.equal(now.output, join(output, id, stamp), 'the dated folder of the scheduled start time');
  checkOutput(now.output, 2);
  const record = JSON.parse(readFileSync(join(now.output, 'batch.json'), 'utf8'));
  assert.equal(record.schedule.id, id);
  assert.equal(record.input, described.batch.input, 'the stored input, though the file is gone');

  // Backfill two nights: two dated folders, named after the nights, not after now.
  const day = 86_400_000;
  const midnight = Math.floor(Date.now() / day) * day;
  const nights = [midnight - 2 * day + 3 * 3_600_000, midnight - day + 3 * 3_600_000].map((time) =>
    new Date(time).toISOString().replace('.000Z', 'Z'),
  );
  const backfilled = await cli([
    'schedule',
    'backfill',
    id,
    '--from',
    new Date(midnight - 2 * day).toISOString(),
    '--to',
    new Date(midnight - day + 12 * 3_600_000).toISOString(),
  ]);
  assert.equal(backfilled.code, 0, backfilled.stderr);
  assert.match(backfilled.stdout, /overlap buffer-all/);
  for (const night of nights) {
    const summary = await scheduledBatch(`${id}-${night}`);
    assert.equal(summary.output, join(output, id, night.replace(/:/g, '-')));
    checkOutput(summary.output, 2);
  }

  const paused = await cli(['schedule', 'pause', id, '--note', 'maintenance']);
  assert.equal(paused.code, 0, paused.stderr);
  assert.deepEqual(JSON.parse((await cli(['schedule', 'describe', id])).stdout).state, {
    paused: true,
    note: 'maintenance',
  });
  assert.equal((await cli(['schedule', 'unpause', id])).code, 0);
  assert.equal(JSON.parse((await cli(['schedule', 'describe', id])).stdout).state.paused, false);

  const updated = await cli([
    'schedule',
    'update',
    id,
    '--cron',
    '30 4 * * *',
    '--rollouts',
    '1',
    '--overlap',
    'buffer-one',
    '--temperature',
    '0.1',
  ]);
  assert.equal(updated.code, 0, updated.stderr);
  const after = JSON.parse((await cli(['schedule', 'describe', id])).stdout);
  assert.equal(after.spec.cron, '30 4 * * *');
  for (const next of after.nextRuns) assert.match(next, /T04:30:00\.000Z$/);
  assert.equal(after.batch.rollouts, 1);
  assert.equal(after.policies.overlap, 'buffer-one');
  assert.deepEqual(
    after.batch.run,
    { limits: { maxModelCalls: 4 }, model: { temperature: 0.1 } },
    'the run options given are laid over the old ones',
  );
  assert.equal(after.batch.questions, 3);
  assert.ok(
    after.recentBatches.some(
      (batch: { batchId: string; status: string }) => batch.batchId === batchId && batch.status === 'COMPLETED',
    ),
  );

  const deleted = await cli(['schedule', 'delete', id]);
  assert.equal(deleted.code, 0, deleted.stderr);
  const gone = await cli(['schedule', 'describe', id]);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, new RegExp(`no schedule "${id}" in namespace default`));
}, 300_000);

test('bad schedules are refused with a message saying what is wrong, and nothing is created', async () => {
  const input = join(environment.directory, 'ok.jsonl');
  writeFileSync(input, '{"question":"q"}\n');
  const output = join(environment.directory, 'never');
  const badCron = await cli([
    'schedule',
    'create',
    'bad-cron',
    '--input',
    input,
    '--output',
    output,
    '--cron',
    '0 25 * * *',
  ]);
  assert.equal(badCron.code, 2);
  assert.match(badCron.stderr, /--cron "0 25 \* \* \*" does not parse: hour field "25": 25 is out of range 0-23\./);
  const fields = await cli([
    'schedule',
    'create',
    'bad-cron',
    '--input',
    input,
    '--output',
    output,
    '--cron',
    'every night',
  ]);
  assert.equal(fields.code, 2);
  assert.match(fields.stderr, /expected 5 fields .*got 2/);
  const noTiming = await cli(['schedule', 'create', 'no-timing', '--input', input, '--output', output]);
  assert.equal(noTiming.code, 2);
  assert.match(noTiming.stderr, /needs --cron EXPR or --every DURATION/);
  const badEvery = await cli([
    'schedule',
    'create',
    'bad-every',
    '--input',
    input,
    '--output',
    output,
    '--every',
    'fortnightly',
  ]);
  assert.equal(badEvery.code, 2);
  assert.match(badEvery.stderr, /--every "fortnightly" is not a duration/);
  const zero = await cli([
    'schedule',
    'create',
    'zero',
    '--input',
    input,
    '--output',
    output,
    '--every',
    '1h',
    '--rollouts',
    '0',
  ]);
  assert.equal(zero.code, 2);
  assert.match(zero.stderr, /--rollouts must be a whole number from 1 to 100, got "0"/);
  const badZone = await cli([
    'schedule',
    'create',
    'zone',
    '--input',
    input,
    '--output',
    output,
    '--every',
    '1h',
    '--timezone',
    'Mars/Olympus',
  ]);
  assert.equal(badZone.code, 2);
  assert.match(badZone.stderr, /--timezone "Mars\/Olympus" is not a known IANA time zone/);
  const badInput = await cli([
    'schedule',
    'create',
    'bad-input',
    '--input',
    join(environment.directory, 'absent.jsonl'),
    '--output',
    output,
    '--every',
    '1h',
  ]);
  assert.equal(badInput.code, 2);
  assert.match(badInput.stderr, /absent\.jsonl: cannot read the input file \(no such file\)/);
  const badBackfill = await cli([
    'schedule',
    'backfill',
    'whatever',
    '--from',
    '2026-01-02T00:00:00Z',
    '--to',
    '2026-01-01T00:00:00Z',
  ]);
  assert.equal(badBackfill.code, 2);
  assert.match(badBackfill.stderr, /--from must be before --to/);

  for (const subcommand of ['describe', 'pause', 'unpause', 'trigger', 'delete']) {
    const unknown = await cli(['schedule', subcommand, 'no-such-schedule']);
    assert.equal(unknown.code, 1, `${subcommand}: ${unknown.stderr}`);
    assert.match(unknown.stderr, /no schedule "no-such-schedule" in namespace default/, subcommand);
  }
  const listed = await cli(['schedule', 'list']);
  assert.doesNotMatch(listed.stdout, /bad-cron|no-timing|bad-every|zero|zone|bad-input/);
}, 300_000);
