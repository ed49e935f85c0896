import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { characterEstimateCounter } from '../../activities/token-counter';
import { TimedTokenCounter } from '../../benchmarks/timed-token-counter';

// The benchmarks' token counter (benchmark:history): it counts as the counter it wraps, times each
// count by activity type, and can hide the encoding so nothing is carried (the baseline).

describe('TimedTokenCounter', () => {
  test('counts as the wrapped counter does, and adds up what it counted, by activity type', async () => {
    const timed = new TimedTokenCounter(characterEstimateCounter);
    assert.equal(timed.count('12345678'), 2);
    const environment = new MockActivityEnvironment({ activityType: 'callModel' });
    await environment.run(async () => {
      timed.count('1234');
      timed.count('12');
    });
    assert.equal(timed.time.counts, 3);
    assert.ok(timed.time.milliseconds >= 0 && timed.time.cpuMilliseconds >= 0);
    assert.deepEqual(
      [...timed.byActivity].map(([type, time]) => [type, time.counts]),
      [
        ['(no activity)', 1],
        ['callModel', 2],
      ],
    );
    timed.reset();
    assert.deepEqual(timed.time, { counts: 0, milliseconds: 0, cpuMilliseconds: 0 });
    assert.equal(timed.byActivity.size, 0);
  });

  test("shows the wrapped counter's encoding unless counts are not to be carried", () => {
    const timed = new TimedTokenCounter(characterEstimateCounter);
    assert.equal(timed.encoding, 'characters/4');
    timed.carryCounts = false;
    assert.equal(timed.encoding, undefined);
  });

  test('measure() starts a new measurement with another counter', () => {
    const timed = new TimedTokenCounter(characterEstimateCounter);
    timed.count('12345678');
    timed.measure({ count: (text) => text.length }, false);
    assert.equal(timed.time.counts, 0);
    assert.equal(timed.count('12345678'), 8);
    assert.equal(timed.encoding, undefined);
  });
});
