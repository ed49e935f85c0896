import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { describeBatchSummary, renderBatchProgress } from '../../src/cli/batch-follow';
import {
  BatchInputRejected,
  batchNumbersFrom,
  batchRunTemplateFrom,
  batchSummaryText,
  checkedInputFile,
  checkedOutputDirectory,
  newBatchId,
} from '../../src/cli/batch-preparation';
import { parseCommandLine } from '../../src/cli/command-line';
import {
  cronProblem,
  formatDuration,
  isKnownTimeZone,
  overlapNameOf,
  overlapPolicyOf,
  parseDuration,
} from '../../src/cli/schedule-spec';
import { UsageError } from '../../src/cli/usage-error';
import type { BatchSummary } from '../../src/core/batch-contract';
import { batchProgress, emptyBatchCounts, recordFinished, recordStarted } from '../../src/core/batch-progress';

const directory = mkdtempSync(join(tmpdir(), 'batch-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('cron expressions', () => {
  test('Temporal’s forms are accepted', () => {
    for (const expression of [
      '0 3 * * *',
      '*/15 9-17 * * MON-FRI',
      '0 0 1 jan,jul *',
      '30 2 * * 0,6 2027',
      '0 30 2 * * * *',
      '@daily',
      '@every 6h',
      '@every 1d/2h',
      'CRON_TZ=Europe/Paris 0 3 * * *',
      '0 3 * * * # nightly',
    ]) {
      assert.equal(cronProblem(expression), undefined, expression);
    }
  });

  test('a broken expression says what is wrong', () => {
    assert.equal(cronProblem('0 25 * * *'), 'hour field "25": 25 is out of range 0-23');
    assert.equal(
      cronProblem('0 3 * *'),
      'expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a year, or 7 with seconds first; got 4: "0 3 * *"',
    );
    assert.equal(
      cronProblem('0 3 * * fun'),
      'day of week field "fun": "fun" is neither a number from 0 to 7 nor a name (sun, mon, tue, wed, thu, fri, sat)',
    );
    assert.equal(cronProblem('*/0 3 * * *'), 'minute field "*/0": the step "0" must be a positive whole number');
    assert.equal(cronProblem('0 17-9 * * *'), 'hour field "17-9": the range 17-9 runs backwards');
    assert.equal(cronProblem('0 3 32 * *'), 'day of month field "32": 32 is out of range 1-31');
    assert.equal(
      cronProblem('@nightly'),
      'unknown shorthand "@nightly"; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or "@every <duration>"',
    );
    assert.equal(cronProblem('@every soon'), '"@every soon" needs a duration such as 30m, 6h or 1d');
    assert.equal(
      cronProblem('CRON_TZ=Mars/Olympus 0 3 * * *'),
      'unknown time zone "Mars/Olympus" in CRON_TZ=Mars/Olympus',
    );
    assert.match(cronProblem('') as string, /the expression is empty/);
  });
});

describe('durations, overlap policies, time zones', () => {
  test('durations', () => {
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('2d'), 172_800_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('1.5h'), 5_400_000);
    for (const bad of ['', 'soon', '10', '-5m', '5 minutes']) assert.equal(parseDuration(bad), undefined, bad);
    assert.equal(formatDuration(77_000), '1m 17s');
    assert.equal(formatDuration(3_725_000), '1h 2m');
    assert.equal(formatDuration(400), '400ms');
  });

  test('overlap names and zones', () => {
    assert.equal(overlapPolicyOf('buffer-one'), 'BUFFER_ONE');
    assert.equal(overlapPolicyOf('Terminate-Other'), 'TERMINATE_OTHER');
    assert.equal(overlapPolicyOf('sometimes'), undefined);
    assert.equal(overlapNameOf('ALLOW_ALL'), 'allow-all');
    assert.equal(isKnownTimeZone('America/New_York'), true);
    assert.equal(isKnownTimeZone('Atlantis/Deep'), false);
  });
});

describe('batch options', () => {
  const help = 'HELP';
  test('run options become the template every run gets', () => {
    assert.deepEqual(
      batchRunTemplateFrom(
        {
          'max-calls': '5',
          protocol: 'native',
          temperature: '0.2',
          'top-p': '0.9',
          tools: 'search, visit',
          model: 'm',
        },
        help,
      ),
      {
        limits: { maxModelCalls: 5 },
        model: { model: 'm', temperature: 0.2, topP: 0.9 },
        tools: ['search', 'visit'],
        protocol: 'native',
      },
    );
    assert.deepEqual(batchRunTemplateFrom({}, help), {});
    assert.throws(
      () => batchRunTemplateFrom({ temperature: 'hot' }, help),
      (error: unknown) =>
        error instanceof UsageError && /--temperature must be a number from 0 to 2, got "hot"/.test(error.message),
    );
    assert.throws(
      () => batchRunTemplateFrom({ protocol: 'smoke-signals' }, help),
      /Invalid run options: protocol must be one of "deep-research", "native", "classic", got "smoke-signals"/,
    );
  });

  test('--rollouts 0 and a bad --concurrency are usage errors; defaults 1 and 8', () => {
    assert.deepEqual(batchNumbersFrom({}, help), { rollouts: 1, concurrency: 8 });
    assert.deepEqual(batchNumbersFrom({ rollouts: '3', concurrency: '2' }, help), { rollouts: 3, concurrency: 2 });
    assert.throws(
      () => batchNumbersFrom({ rollouts: '0' }, help),
      /--rollouts must be a whole number from 1 to 100, got "0"/,
    );
    assert.throws(
      () => batchNumbersFrom({ concurrency: '2.5' }, help),
      /--concurrency must be a whole number from 1 to 1000/,
    );
    assert.throws(
      () => parseCommandLine(['--nope'], { output: { type: 'string' } }, help),
      (error: unknown) => error instanceof UsageError && /Unknown option '--nope'/.test(error.message),
    );
  });

  test('ids and the Web UI summary', () => {
    assert.match(
      newBatchId('Nightly Eval!', new Date('2026-01-02T03:04:05Z')),
      /^batch-nightly-eval-20260102-030405-[0-9a-z]{1,4}$/,
    );
    assert.match(newBatchId(undefined, new Date('2026-01-02T03:04:05Z')), /^batch-20260102-030405-[0-9a-z]{1,4}$/);
    assert.equal(batchSummaryText(20, 3, '/data/out'), '20 questions × 3 rollouts → /data/out');
    assert.equal(batchSummaryText(1, 1, '/o'), '1 question × 1 rollout → /o');
  });

  test('a bad input file is refused with every problem; duplicates are notes', async () => {
    const bad = join(directory, 'bad.jsonl');
    writeFileSync(bad, '{"question":"a"}\n{oops\n{"question":""}\n');
    await assert.rejects(checkedInputFile(bad), (error: unknown) => {
      assert.ok(error instanceof BatchInputRejected);
      assert.deepEqual(error.lines.length, 3);
      assert.match(error.lines[0] as string, /bad\.jsonl:2: not JSON/);
      assert.match(error.lines[1] as string, /bad\.jsonl:3: no question/);
      assert.equal(error.lines[2], `${bad}: 2 problems; nothing was started.`);
      return true;
    });
    const twice = join(directory, 'twice.csv');
    writeFileSync(twice, 'question\nsame\nother\nsame\n');
    const { notes } = await checkedInputFile(twice);
    assert.deepEqual(notes, [
      `${twice}: the question "same" appears 2 times (lines 2, 4); each is kept as its own item (q0, q2).`,
    ]);
  });

  test('the output directory is made absolute, created, and refused when it holds results and --resume is absent', async () => {
    const output = join(directory, 'out', 'deep');
    assert.equal(await checkedOutputDirectory(output, { resume: false }), output);
    mkdirSync(join(output, 'runs', 'iter1'), { recursive: true });
    writeFileSync(join(output, 'runs', 'iter1', 'q0.json'), '{}\n');
    writeFileSync(join(output, 'batch.json'), JSON.stringify({ id: 'batch-old', input: 'sha256:1' }));
    await assert.rejects(
      checkedOutputDirectory(output, { resume: false }),
      /already holds results of batch batch-old\. Add --resume/,
    );
    assert.equal(await checkedOutputDirectory(output, { resume: true, input: 'sha256:1' }), output);
    await assert.rejects(
      checkedOutputDirectory(output, { resume: true, input: 'sha256:2' }),
      /over other questions \(sha256:1\); --resume needs the same input/,
    );
    await assert.rejects(
      checkedOutputDirectory(join(directory, 'bad.jsonl'), { resume: false }),
      /is not a directory\. Nothing was started\./,
    );
    await assert.rejects(
      checkedOutputDirectory('/proc/no-such-place', { resume: false }),
      /Cannot create the output directory \/proc\/no-such-place/,
    );
  });
});

describe('following a batch', () => {
  test('a progress bar line: done out of all, what runs, terminations, rate and ETA', () => {
    const counts = emptyBatchCounts(2);
    for (let index = 0; index < 6; index += 1) recordStarted(counts, 1);
    for (let index = 0; index < 3; index += 1) recordFinished(counts, 1, { termination: 'answer' });
    recordFinished(counts, 1, { termination: 'max_calls' });
    const progress = batchProgress({
      batchId: 'b',
      state: 'running',
      output: '/o',
      questions: 10,
      concurrency: 2,
      counts,
      startedAt: 0,
      now: 30_000,
      continuedAsNew: 0,
    });
    assert.equal(
      renderBatchProgress(progress, 60_000, 10),
      '[##--------] 4/20 · running 2 · answer 3, max_calls 1 · 4 runs/min · ETA 4m',
    );
    assert.equal(renderBatchProgress({ ...progress, state: 'cancelling' }, 60_000, 10).split(' · ')[1], 'cancelling');
  });

  test('the summary, one line per iter file, and its cost (— when no run had a price)', () => {
    const summary = {
      batchId: 'b',
      output: '/o',
      cancelled: true,
      durationMs: 65_000,
      lines: 5,
      perRollout: [
        { rollout: 1, terminations: { answer: 3 }, failed: 1, kept: 0, notRun: 0 },
        { rollout: 2, terminations: { cancelled: 1 }, failed: 0, kept: 2, notRun: 1 },
      ],
    } as unknown as BatchSummary;
    assert.equal(
      describeBatchSummary(summary),
      'Batch b was cancelled after 1m 5s: 5 lines in /o\n  iter1.jsonl: answer 3 (1 failed)\n  iter2.jsonl: cancelled 1 (2 kept from before, 1 not run)\n  cost: —',
    );
  });
});
