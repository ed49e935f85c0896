import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  batchOutputDirectory,
  batchRunId,
  pairOfOrdinal,
  parseBatchRunId,
  scheduledFolderName,
  validateBatchInput,
  type ResearchBatchInput,
} from '../../src/core/batch-contract';
import {
  batchProgress,
  emptyBatchCounts,
  estimateRemainingMs,
  linesOf,
  recordFinished,
  recordKept,
  recordStarted,
  summaryPerRollout,
} from '../../src/core/batch-progress';

const reference = `sha256:${'a'.repeat(64)}`;
const valid: ResearchBatchInput = { input: reference, questions: 20, rollouts: 2, output: '/tmp/out' };

describe('ids and ordering', () => {
  test('run ids are <batch id>/q<index>-r<rollout> and parse back', () => {
    assert.equal(batchRunId('nightly-1', 7, 2), 'nightly-1/q7-r2');
    assert.deepEqual(parseBatchRunId('nightly/2026-01-01T03:00:00Z/q7-r2'), {
      batchId: 'nightly/2026-01-01T03:00:00Z',
      index: 7,
      rollout: 2,
    });
    assert.equal(parseBatchRunId('research-20260101-1234'), undefined);
  });

  test('pairs go rollout by rollout, so iter1 fills first', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((ordinal) => pairOfOrdinal(ordinal, 3)),
      [
        { index: 0, rollout: 1 },
        { index: 1, rollout: 1 },
        { index: 2, rollout: 1 },
        { index: 0, rollout: 2 },
        { index: 1, rollout: 2 },
        { index: 2, rollout: 2 },
      ],
    );
  });

  test('a scheduled batch writes to DIR/<schedule id>/<scheduled start time>/', () => {
    const night = new Date('2026-03-04T03:00:00.000Z');
    assert.equal(scheduledFolderName(night), '2026-03-04T03-00-00Z');
    assert.equal(
      batchOutputDirectory('/data/out/', { id: 'nightly' }, night),
      '/data/out/nightly/2026-03-04T03-00-00Z',
    );
    assert.equal(batchOutputDirectory('/data/out', undefined, night), '/data/out');
  });
});

describe('validateBatchInput', () => {
  test('a valid input has no problems', () => {
    assert.deepEqual(validateBatchInput(valid), []);
    assert.deepEqual(
      validateBatchInput({
        ...valid,
        concurrency: 3,
        run: { limits: { maxModelCalls: 5 }, protocol: 'native' },
        schedule: { id: 'nightly.v2' },
      }),
      [],
    );
  });

  test('each bad field is named', () => {
    assert.deepEqual(validateBatchInput({ ...valid, rollouts: 0 }), [
      'rollouts must be an integer from 1 to 100, got 0',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, concurrency: 1.5 }), [
      'concurrency must be an integer from 1 to 1000, got 1.5',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, input: 'questions.jsonl' }), [
      'input must be a stored input reference (sha256:…), got "questions.jsonl"',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, output: 'relative/dir' }), [
      'output must be an absolute directory path or an s3://bucket/prefix URL, got "relative/dir"',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, output: 's3://Bad_Bucket/x' }), [
      'output must be an absolute directory path or an s3://bucket/prefix URL, got "s3://Bad_Bucket/x"',
    ]);
    assert.deepEqual(
      validateBatchInput({ ...valid, output: 's3://batch-outputs/nightly' }),
      [],
      'an s3:// output is valid',
    );
    assert.deepEqual(validateBatchInput({ ...valid, questions: 0 }), [
      'questions must be an integer from 1 to 1000000, got 0',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, schedule: { id: '../escape' } }), [
      "schedule.id must be letters, digits, '.', '_' or '-', got \"../escape\"",
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, run: { limits: { maxModelCalls: 0 } } }), [
      'run.limits.maxModelCalls must be an integer from 1 to 10000, got 0',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, run: { limts: { maxModelCalls: 3 } } as never }), [
      'run.limts is not a known field (known: limits, model, tools, protocol, loop, answerSchema, subruns)',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, run: { question: 'x' } as never }), [
      'run.question is not a known field (known: limits, model, tools, protocol, loop, answerSchema, subruns)',
    ]);
    assert.deepEqual(validateBatchInput({ ...valid, rollouts: 'two', output: 'relative', colour: 'red' } as never), [
      'rollouts must be an integer, got "two"',
      'colour is not a known field (known: input, questions, rollouts, concurrency, output, run, name, source, resume, schedule, runsPerContinuation, evaluate, carry)',
      'output must be an absolute directory path or an s3://bucket/prefix URL, got "relative"',
    ]);
  });
});

describe('counts and progress', () => {
  test('counts by state and termination per rollout; queued is what is neither started nor kept', () => {
    const counts = emptyBatchCounts(2);
    for (let index = 0; index < 4; index += 1) recordStarted(counts, 1);
    recordFinished(counts, 1, {
      termination: 'answer',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      durationMs: 1_000,
    });
    recordFinished(counts, 1, {
      termination: 'max_calls',
      usage: { promptTokens: 20, completionTokens: 5, totalTokens: 25 },
      durationMs: 3_000,
    });
    recordFinished(counts, 1, { failed: true });
    recordKept(counts, 2, 'answer');
    recordKept(counts, 2, 'answer');
    const progress = batchProgress({
      batchId: 'b',
      state: 'running',
      output: '/o',
      questions: 5,
      concurrency: 4,
      counts,
      startedAt: 0,
      now: 60_000,
      continuedAsNew: 1,
    });
    assert.deepEqual(progress.perRollout, [
      { rollout: 1, queued: 1, running: 1, done: { answer: 1, max_calls: 1 }, failed: 1, kept: 0 },
      { rollout: 2, queued: 3, running: 0, done: { answer: 2 }, failed: 0, kept: 2 },
    ]);
    assert.deepEqual(progress.totals, { pairs: 10, queued: 4, running: 1, done: 4, failed: 1, kept: 2 });
    assert.equal(progress.runsPerMinute, 3, 'three runs finished here in a minute (kept pairs are not counted)');
    assert.equal(progress.etaMs, Math.round((5 * 60_000) / 3), 'five pairs left at three a minute');
    assert.equal(progress.startedAt, '1970-01-01T00:00:00.000Z');
    assert.equal(linesOf(counts), 5);
    const summary = summaryPerRollout(counts, 5);
    assert.deepEqual(summary[0], {
      rollout: 1,
      terminations: { answer: 1, max_calls: 1 },
      failed: 1,
      kept: 0,
      notRun: 1,
      usage: { promptTokens: 30, completionTokens: 10, totalTokens: 40 },
      durationMs: { total: 4_000, mean: 2_000, max: 3_000 },
    });
    assert.equal(summary[1]?.notRun, 3);
    assert.throws(() => recordStarted(counts, 3), /rollout 3 is not in this batch \(1 to 2\)/);
  });

  test('no estimate before a run finished; none left means zero', () => {
    assert.equal(estimateRemainingMs(0, 10, 5_000), undefined);
    assert.equal(estimateRemainingMs(3, 0, 5_000), 0);
    assert.equal(estimateRemainingMs(2, 4, 10_000), 20_000);
    const progress = batchProgress({
      batchId: 'b',
      state: 'starting',
      output: '/o',
      questions: 2,
      concurrency: 1,
      counts: emptyBatchCounts(1),
      startedAt: 0,
      now: 0,
      continuedAsNew: 0,
    });
    assert.equal(progress.etaMs, undefined);
    assert.equal(progress.runsPerMinute, undefined);
  });
});
