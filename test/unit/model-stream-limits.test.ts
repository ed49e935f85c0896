import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { modelStreamLimits } from '../../activities/model-activity';
import { DEFAULT_STALL_LIMIT_MS } from '../../activities/model/chat-model';

describe('a model call: its stall limit and heartbeat interval', () => {
  test('the worker stall limit wins over the heartbeat timeout; heartbeats follow the heartbeat timeout', () => {
    // The defaults: a 20 s heartbeat timeout, 60 s of silence mid-stream allowed.
    assert.deepEqual(modelStreamLimits(60, 20_000), { stallLimitMs: 60_000, heartbeatIntervalMs: 5_000 });
    // A short heartbeat timeout still gets heartbeats a third of it apart, whatever the stall limit.
    assert.deepEqual(modelStreamLimits(60, 6_000), { stallLimitMs: 60_000, heartbeatIntervalMs: 2_000 });
    assert.deepEqual(modelStreamLimits(2.5, 30_000), { stallLimitMs: 2_500, heartbeatIntervalMs: 5_000 });
  });

  test('no worker stall limit (an embedder that sets none): the heartbeat timeout, as before the two were separate', () => {
    assert.deepEqual(modelStreamLimits(undefined, 5_000), { stallLimitMs: 5_000, heartbeatIntervalMs: 1_666 });
  });

  test('no heartbeat timeout either: the default stall limit, heartbeats from it', () => {
    assert.deepEqual(modelStreamLimits(undefined, undefined), { stallLimitMs: DEFAULT_STALL_LIMIT_MS, heartbeatIntervalMs: 5_000 });
    assert.deepEqual(modelStreamLimits(9, undefined), { stallLimitMs: 9_000, heartbeatIntervalMs: 3_000 });
  });
});
