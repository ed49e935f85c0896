import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from '@jest/globals';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  heartbeat,
  heartbeatIntervalFor,
  keepHeartbeating,
  MAX_HEARTBEAT_INTERVAL_MS,
} from '../../activities/heartbeats';

const quietLogger = new DefaultLogger('ERROR', () => undefined);

function environment(isLocal: boolean) {
  const env = new MockActivityEnvironment({ isLocal }, { logger: quietLogger });
  const sent: unknown[] = [];
  env.on('heartbeat', (details: unknown) => sent.push(details));
  return { env, sent };
}

describe('heartbeats, one way for every activity', () => {
  test('the interval: a third of the heartbeat timeout, at most 5 s, at least 1 ms', () => {
    assert.equal(heartbeatIntervalFor(600), 200);
    assert.equal(heartbeatIntervalFor(60_000), MAX_HEARTBEAT_INTERVAL_MS);
    assert.equal(heartbeatIntervalFor(1), 1);
  });

  test('a step heartbeat reaches Temporal in an activity; nothing in a local activity or outside one', async () => {
    const remote = environment(false);
    await remote.env.run(async () => heartbeat({ step: 1 }));
    assert.deepEqual(remote.sent, [{ step: 1 }]);
    const local = environment(true);
    await local.env.run(async () => heartbeat({ step: 1 }));
    assert.deepEqual(local.sent, []);
    assert.doesNotThrow(() => heartbeat('outside'));
  });

  test('keepHeartbeating sends until stopped', async () => {
    let sent = 0;
    const stop = keepHeartbeating(() => (sent += 1), 20);
    await sleep(110);
    stop();
    const atStop = sent;
    assert.ok(atStop >= 2, `expected heartbeats every 20 ms, got ${atStop}`);
    await sleep(60);
    assert.equal(sent, atStop);
  });
});
