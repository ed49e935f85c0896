import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { chatControls, modelStreamLimits } from '../../activities/model/chat-controls';
import { DEFAULT_FIRST_CHUNK_LIMIT_MS, DEFAULT_STALL_LIMIT_MS } from '../../activities/model/chat-model';

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
    assert.deepEqual(modelStreamLimits(undefined, undefined), {
      stallLimitMs: DEFAULT_STALL_LIMIT_MS,
      heartbeatIntervalMs: 5_000,
    });
    assert.deepEqual(modelStreamLimits(9, undefined), { stallLimitMs: 9_000, heartbeatIntervalMs: 3_000 });
  });
});

describe('chatControls: the one builder of a model call’s controls', () => {
  const signal = new AbortController().signal;

  test('a caller that knows nothing but its signal (the page summariser): the defaults, spelled out', () => {
    assert.deepEqual(chatControls({ signal }), {
      signal,
      firstChunkLimitMs: DEFAULT_FIRST_CHUNK_LIMIT_MS,
      stallLimitMs: DEFAULT_STALL_LIMIT_MS,
      heartbeatIntervalMs: 5_000,
    });
  });

  test('an activity that knows its heartbeat timeout (the judge, compression): stalls bounded by it, heartbeats a third of it apart', () => {
    const onProgress = () => undefined;
    assert.deepEqual(chatControls({ signal, heartbeatTimeoutMs: 6_000, onProgress }), {
      signal,
      firstChunkLimitMs: DEFAULT_FIRST_CHUNK_LIMIT_MS,
      stallLimitMs: 6_000,
      heartbeatIntervalMs: 2_000,
      onProgress,
    });
  });

  test('a heartbeat timeout of 0 is none', () => {
    assert.deepEqual(chatControls({ signal, heartbeatTimeoutMs: 0 }), chatControls({ signal }));
  });

  test('the model activity: its first-token and stall limits in seconds, its callbacks passed on', () => {
    const onDelta = () => undefined;
    const onProgress = () => undefined;
    assert.deepEqual(
      chatControls({
        signal,
        heartbeatTimeoutMs: 20_000,
        firstTokenSeconds: 30,
        stallSeconds: 60,
        onDelta,
        onProgress,
      }),
      {
        signal,
        firstChunkLimitMs: 30_000,
        stallLimitMs: 60_000,
        heartbeatIntervalMs: 5_000,
        onDelta,
        onProgress,
      },
    );
  });
});
