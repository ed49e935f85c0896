import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type { ResearchBatchInput } from '../../src/core/batch-contract';
import { emptyBatchCounts, recordFinished, recordStarted } from '../../src/core/batch-progress';
import {
  batchResult,
  batchRunStart,
  batchSummary,
  chunkInput,
  continuedInput,
  continuesAsNew,
  evaluationAtEnd,
  initialCarry,
  innermostMessage,
  lineInput,
  openingRecord,
  pausesForContinueAsNew,
  stateOnCancel,
} from '../../src/core/batch-transitions';
import { REACT_BATCH_ID, REACT_ROLLOUT } from '../../src/core/search-attributes';

const reference = `sha256:${'a'.repeat(64)}`;
const input: ResearchBatchInput = { input: reference, questions: 3, rollouts: 2, output: '/data/out' };
const scheduledStart = new Date('2026-01-02T03:00:00.000Z');
const startedAt = Date.parse('2026-01-02T03:00:05.000Z');

/** Activity inputs and results keep their fields in order, as recorded histories have them. */
const keys = (value: object) => Object.keys(value);

describe('a new batch', () => {
  test('starts from the first pair with empty counts; a scheduled one writes to its dated folder', () => {
    assert.deepEqual(initialCarry(input, startedAt, scheduledStart), {
      cursor: 0,
      counts: emptyBatchCounts(2),
      startedAt,
      output: '/data/out',
      continuedAsNew: 0,
    });
    assert.equal(
      initialCarry({ ...input, schedule: { id: 'nightly' } }, startedAt, scheduledStart).output,
      '/data/out/nightly/2026-01-02T03-00-00Z',
    );
  });

  test('records what batch.json says, optional fields only when given', () => {
    const carry = initialCarry(input, startedAt, scheduledStart);
    const plain = openingRecord(input, { id: 'b', concurrency: 8, carry, scheduledStart });
    assert.deepEqual(plain, {
      id: 'b',
      input: reference,
      questions: 3,
      rollouts: 2,
      concurrency: 8,
      run: {},
      output: '/data/out',
      startedAt: '2026-01-02T03:00:05.000Z',
      status: 'running',
    });
    const full = openingRecord(
      { ...input, name: 'n', source: 'q.jsonl', schedule: { id: 'nightly' }, run: { protocol: 'native' } },
      { id: 'b', concurrency: 2, carry, scheduledStart },
    );
    assert.deepEqual(keys(full), [
      'id',
      'name',
      'input',
      'source',
      'questions',
      'rollouts',
      'concurrency',
      'run',
      'output',
      'schedule',
      'startedAt',
      'status',
    ]);
    assert.deepEqual(full.schedule, { id: 'nightly', scheduledStart: '2026-01-02T03:00:00.000Z' });
    assert.deepEqual(full.run, { protocol: 'native' });
  });
});

describe('a workflow run of the batch', () => {
  test('takes runsPerContinuation pairs from the cursor, never past the last', () => {
    const carry = initialCarry(input, startedAt, scheduledStart);
    assert.deepEqual(chunkInput(input, carry, 0, 4), {
      input: reference,
      output: '/data/out',
      questions: 3,
      rollouts: 2,
      from: 0,
      to: 4,
      resume: false,
    });
    assert.deepEqual(
      { ...chunkInput({ ...input, resume: true }, carry, 4, 4) },
      { ...chunkInput(input, carry, 4, 4), to: 6, resume: true },
    );
  });

  test('starts each pair as a child researchAgent with the run options, its question and reference, tagged', () => {
    const run = batchRunStart(
      'b',
      { ...input, run: { protocol: 'native' } },
      { ordinal: 4, question: 'Why?', answer: '42' },
    );
    assert.deepEqual(
      { index: run.index, rollout: run.rollout, workflowId: run.workflowId, question: run.question },
      { index: 1, rollout: 2, workflowId: 'b/q1-r2', question: 'Why?' },
    );
    assert.deepEqual(run.options, {
      workflowId: 'b/q1-r2',
      args: [{ protocol: 'native', question: 'Why?', answer: '42' }],
      typedSearchAttributes: [
        { key: REACT_BATCH_ID, value: 'b' },
        { key: REACT_ROLLOUT, value: 2 },
      ],
      staticSummary: 'Why?',
    });
    assert.deepEqual(keys(run.options.args[0]), ['protocol', 'question', 'answer']);
    const long = batchRunStart('b', input, { ordinal: 0, question: `${'x'.repeat(300)}\nmore` });
    assert.deepEqual(long.options.args, [{ question: `${'x'.repeat(300)}\nmore` }], 'no answer, no field');
    assert.ok(long.options.staticSummary.length <= 200);
  });

  test('a failed run’s line says the innermost message', () => {
    const inner = new Error('the model rejected the key');
    const outer = new Error('child failed', { cause: new Error('', { cause: inner }) });
    assert.equal(innermostMessage(outer), 'the model rejected the key');
    assert.equal(innermostMessage(new Error('alone')), 'alone');
    assert.equal(innermostMessage('a string'), 'a string');
    assert.equal(
      innermostMessage(new Error('outer', { cause: new Error('') })),
      'outer',
      'an empty message keeps the last',
    );
  });

  test('writes a run’s line with its ids and, when it failed, what went wrong', () => {
    const batch = { batchId: 'b', output: '/data/out' };
    const run = { workflowId: 'b/q1-r2', index: 1, rollout: 2, question: 'Why?' };
    assert.deepEqual(lineInput(batch, { ...run, runId: 'r1' }, '42', undefined), {
      output: '/data/out',
      batchId: 'b',
      workflowId: 'b/q1-r2',
      runId: 'r1',
      index: 1,
      rollout: 2,
    });
    const failed = lineInput(batch, { ...run, runId: undefined }, '42', { error: new Error('gone') });
    assert.deepEqual(keys(failed), ['output', 'batchId', 'workflowId', 'index', 'rollout', 'failure']);
    assert.deepEqual(failed.failure, { message: 'gone', question: 'Why?', answer: '42' });
    assert.deepEqual(lineInput(batch, run, undefined, { error: 'x' }).failure, { message: 'x', question: 'Why?' });
  });

  test('pauses for continue-as-new only when suggested and once it started a run', () => {
    assert.equal(pausesForContinueAsNew(0, true), false);
    assert.equal(pausesForContinueAsNew(1, true), true);
    assert.equal(pausesForContinueAsNew(5, false), false);
  });

  test('continues as new while pairs are left, unless cancelled, carrying its cursor and counts', () => {
    assert.equal(continuesAsNew({ cancelled: false, cursor: 4, total: 6 }), true);
    assert.equal(continuesAsNew({ cancelled: false, cursor: 6, total: 6 }), false);
    assert.equal(continuesAsNew({ cancelled: true, cursor: 4, total: 6 }), false);
    const carry = initialCarry(input, startedAt, scheduledStart);
    const counts = emptyBatchCounts(2);
    recordStarted(counts, 1);
    const next = continuedInput({ ...input, name: 'n' }, carry, 4, counts);
    assert.deepEqual(next, { ...input, name: 'n', carry: { ...carry, cursor: 4, counts, continuedAsNew: 1 } });
    assert.equal(continuedInput(next, next.carry as never, 6, counts).carry?.continuedAsNew, 2);
  });

  test('a cancellation makes a running batch cancelling; starting or finishing, it stays', () => {
    assert.equal(stateOnCancel('running'), 'cancelling');
    assert.equal(stateOnCancel('starting'), 'starting');
    assert.equal(stateOnCancel('finishing'), 'finishing');
    assert.equal(stateOnCancel('cancelling'), 'cancelling');
  });

  test('evaluates itself at its end when asked to, unless cancelled', () => {
    assert.equal(evaluationAtEnd(input, false), undefined);
    assert.deepEqual(evaluationAtEnd({ ...input, evaluate: { judge: 'gaia' } }, false), { judge: 'gaia' });
    assert.equal(evaluationAtEnd({ ...input, evaluate: {} }, true), undefined);
  });
});

describe('the end of a batch', () => {
  const carry = () => {
    const started = initialCarry(input, startedAt, scheduledStart);
    recordStarted(started.counts, 1);
    recordFinished(started.counts, 1, {
      termination: 'answer',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      durationMs: 1000,
    });
    return started;
  };

  test('its summary: counts per rollout, times, lines; a cost only when a run had a price', () => {
    const summary = batchSummary(
      { ...input, name: 'n' },
      { id: 'b', carry: carry(), cancelled: true, endedAt: startedAt + 60_000 },
    );
    assert.deepEqual(keys(summary), [
      'batchId',
      'name',
      'output',
      'input',
      'questions',
      'rollouts',
      'cancelled',
      'startedAt',
      'endedAt',
      'durationMs',
      'continuedAsNew',
      'lines',
      'perRollout',
    ]);
    assert.equal(summary.cancelled, true);
    assert.equal(summary.durationMs, 60_000);
    assert.equal(summary.endedAt, '2026-01-02T03:01:05.000Z');
    assert.equal(summary.lines, 1);
    assert.deepEqual(summary.perRollout[0]?.terminations, { answer: 1 });
    assert.equal(summary.perRollout[1]?.notRun, 3);
    const priced = carry();
    recordStarted(priced.counts, 2);
    recordFinished(priced.counts, 2, {
      termination: 'answer',
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, costUsd: 0.5 },
      durationMs: 1,
    });
    assert.equal(
      batchSummary(input, { id: 'b', carry: priced, cancelled: false, endedAt: startedAt }).cost?.totalUsd,
      0.5,
    );
  });

  test('its result: the lines the iter files were assembled from, and its evaluation when there was one', () => {
    const summary = batchSummary(input, { id: 'b', carry: carry(), cancelled: false, endedAt: startedAt });
    assert.deepEqual(batchResult(summary, { lines: [3, 2] }, undefined), { ...summary, lines: 5 });
    const evaluation = { evaluationId: 'b/evaluation', failed: 'judge down' };
    assert.deepEqual(batchResult(summary, { lines: [] }, evaluation), { ...summary, lines: 0, evaluation });
  });
});
