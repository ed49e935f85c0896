import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { explainRetries, startedAttempts } from '../../benchmarks/retry-explanation';

const line = (event: string, workflowId: string, activityId: string, attempt: number) =>
  JSON.stringify({ at: '2026-12-02T09:00:00.000Z', pid: 1, event, workflowId, activityId, type: 'callModel', attempt });

describe('why retried model calls were retried, from the workers’ traces', () => {
  test('a failed attempt no worker started was lost before any worker; one that started ran there', () => {
    const started = startedAttempts([
      line('start', 'run-1', '5', 2),
      line('end', 'run-1', '5', 2),
      line('start', 'run-2', '7', 1),
      line('start', 'run-2', '7', 2),
      line('start', 'run-2', '7', 3),
      JSON.stringify({ event: 'lag', lateMs: 2000 }),
      '',
    ]);
    assert.deepEqual(
      explainRetries(
        [
          { workflowId: 'run-1', activityId: '5', attempt: 2 },
          { workflowId: 'run-2', activityId: '7', attempt: 3 },
        ],
        started,
      ),
      { neverStarted: 1, startedOnAWorker: 2 },
    );
  });

  test('an end without a start does not count as started; no retries, nothing to explain', () => {
    assert.deepEqual(
      explainRetries(
        [{ workflowId: 'run-1', activityId: '5', attempt: 2 }],
        startedAttempts([line('end', 'run-1', '5', 1)]),
      ),
      { neverStarted: 1, startedOnAWorker: 0 },
    );
    assert.deepEqual(explainRetries([], new Set()), { neverStarted: 0, startedOnAWorker: 0 });
  });
});
