import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { backfillRangeFrom } from '../../src/cli/commands/schedule/backfill';
import { scheduleIdFrom, specFrom, type ScheduleValues } from '../../src/cli/commands/schedule/schedule-options';
import { mergeRunOptions, updatedSchedule, type PreviousSchedule } from '../../src/cli/commands/schedule/update';

/* The decisions of `react-agent schedule` (src/cli/commands/schedule/), apart from Temporal. */
describe('schedule options', () => {
  test('the spec: a cron or an interval, a zone, a jitter', () => {
    assert.deepEqual(specFrom({ cron: '0 3 * * *', timezone: 'Europe/Paris' }), {
      timing: { cronExpressions: ['0 3 * * *'] },
      timezone: 'Europe/Paris',
    });
    assert.deepEqual(specFrom({ every: '6h', jitter: '5m' }), {
      timing: { intervals: [{ every: 6 * 3_600_000 }] },
      jitter: 300_000,
    });
    assert.deepEqual(specFrom({}), {});
    assert.throws(() => specFrom({ cron: '0 3 * * *', every: '1h' }), /Give --cron or --every, not both/);
    assert.throws(() => specFrom({ every: '500ms' } as ScheduleValues), /--every/);
    assert.throws(() => specFrom({ timezone: 'Atlantis/Deep' }), /not a known IANA time zone/);
  });

  test('the schedule id names a folder', () => {
    assert.equal(scheduleIdFrom(['create', 'nightly-1'], 'create'), 'nightly-1');
    assert.throws(() => scheduleIdFrom(['pause'], 'pause'), /schedule pause needs a schedule id/);
    assert.throws(() => scheduleIdFrom(['pause', '../x'], 'pause'), /A schedule id is letters/);
    assert.throws(() => scheduleIdFrom(['pause', 'a', 'b'], 'pause'), /Unexpected arguments after the schedule id: b/);
  });

  test('a backfill range is two times, the first before the second', () => {
    assert.deepEqual(backfillRangeFrom({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }), {
      from: new Date('2026-01-01T00:00:00Z'),
      to: new Date('2026-01-02T00:00:00Z'),
    });
    assert.throws(() => backfillRangeFrom({ from: '2026-01-01T00:00:00Z' }), /needs --from T and --to T/);
    assert.throws(
      () => backfillRangeFrom({ from: 'yesterday', to: '2026-01-02T00:00:00Z' }),
      /--from "yesterday" is not a time/,
    );
    assert.throws(
      () => backfillRangeFrom({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }),
      /--from must be before --to/,
    );
  });
});

describe('schedule update', () => {
  const previous = {
    spec: { cronExpressions: ['0 3 * * *'], timezone: 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: 'researchBatch',
      args: [
        {
          input: 'sha256:a',
          questions: 2,
          rollouts: 1,
          concurrency: 8,
          output: '/out',
          run: { limits: { maxModelCalls: 5 }, protocol: 'native' },
          source: 'q.jsonl',
          schedule: { id: 's' },
        },
      ],
      memo: { questions: 2, rollouts: 1, output: '/out/s', schedule: 's', cron: '0 3 * * *', source: 'q.jsonl' },
    },
    policies: { overlap: 'SKIP', catchupWindow: 60_000, pauseOnFailure: false },
    state: { paused: false, note: 'kept' },
  } as unknown as PreviousSchedule;

  test('run options are laid over the previous ones', () => {
    assert.deepEqual(
      mergeRunOptions(
        { limits: { maxModelCalls: 5 }, model: { temperature: 0.2 }, protocol: 'native' },
        { limits: { maxContextTokens: 9 }, tools: [] },
      ),
      {
        limits: { maxModelCalls: 5, maxContextTokens: 9 },
        model: { temperature: 0.2 },
        protocol: 'native',
        tools: [],
      },
    );
  });

  test('nothing given keeps everything', () => {
    const updated = updatedSchedule('s', previous, {});
    assert.deepEqual(updated.spec, previous.spec);
    assert.deepEqual(updated.action.args, previous.action.args);
    assert.deepEqual(updated.policies, { overlap: 'SKIP', catchupWindow: 60_000, pauseOnFailure: false });
    assert.deepEqual(updated.state, { paused: false, note: 'kept' });
    assert.equal(updated.action.staticSummary, '2 questions × 1 rollout → /out/s/<scheduled time>');
  });

  test('what is given replaces what was, and an interval replaces the cron in the spec and the memo', () => {
    const updated = updatedSchedule('s', previous, {
      questions: { input: 'sha256:b', questions: 3, source: 'new.jsonl' },
      rollouts: 2,
      run: { limits: { maxContextTokens: 9 } },
      timing: { intervals: [{ every: 3_600_000 }] },
      every: '1h',
      pauseOnFailure: true,
      paused: true,
      note: 'new',
    });
    const input = updated.action.args?.[0] as Record<string, unknown>;
    assert.equal(input.input, 'sha256:b');
    assert.equal(input.questions, 3);
    assert.equal(input.rollouts, 2);
    assert.equal(input.concurrency, 8);
    assert.deepEqual(input.run, { limits: { maxModelCalls: 5, maxContextTokens: 9 }, protocol: 'native' });
    assert.deepEqual(updated.spec, { intervals: [{ every: 3_600_000 }], timezone: 'UTC' });
    assert.deepEqual(updated.action.memo, {
      questions: 3,
      rollouts: 2,
      output: '/out/s',
      schedule: 's',
      every: '1h',
      source: 'new.jsonl',
    });
    assert.equal(updated.policies?.pauseOnFailure, true);
    assert.deepEqual(updated.state, { paused: true, note: 'new' });
  });
});
