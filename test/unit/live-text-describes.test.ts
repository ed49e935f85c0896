import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { nextRunDescribeAt, type RunDescribeState } from '../../src/domain/live-text-describes';

// Issue 32: when a watcher of a run's live text asks Temporal to describe the run. A call a
// worker's run stream pushes costs no describe but the 10 s check; with no call open, a backoff
// finds calls that land elsewhere.

const quiet: RunDescribeState = {
  pushed: 0,
  waiting: 0,
  heartbeat: 0,
  runStreams: 0,
  lastDescribeAt: 1_000,
  quietSince: 1_000,
  quietDescribes: 0,
};

describe('when a run watcher describes the run', () => {
  test('at once when it starts watching', () => {
    assert.equal(nextRunDescribeAt({ ...quiet, lastDescribeAt: undefined, quietSince: 500 }), 500);
  });

  test('while every open call is pushed, only the check every 10 s', () => {
    assert.equal(nextRunDescribeAt({ ...quiet, pushed: 1, runStreams: 1 }), 11_000);
    assert.equal(nextRunDescribeAt({ ...quiet, pushed: 1, runStreams: 1 }, { pushedCheckMs: 3_000 }), 4_000);
  });

  test('a call without a source yet is looked for every 250 ms, one read from heartbeats every second', () => {
    assert.equal(nextRunDescribeAt({ ...quiet, waiting: 1, pushed: 1 }), 1_250);
    assert.equal(nextRunDescribeAt({ ...quiet, heartbeat: 1, pushed: 1 }), 2_000);
  });

  test('with no call open and a run stream, the next call has 1 s to show up on it, then the backoff doubles to 2 s', () => {
    const streaming = { ...quiet, runStreams: 1, lastDescribeAt: 0, quietSince: 5_000 };
    assert.equal(nextRunDescribeAt(streaming), 6_000);
    assert.equal(nextRunDescribeAt({ ...streaming, lastDescribeAt: 6_000, quietDescribes: 1 }), 8_000);
    assert.equal(nextRunDescribeAt({ ...streaming, lastDescribeAt: 8_000, quietDescribes: 2 }), 10_000);
    assert.equal(nextRunDescribeAt({ ...streaming, lastDescribeAt: 10_000, quietDescribes: 60 }), 12_000);
  });

  test('with no call open and no run stream, the backoff starts at 250 ms', () => {
    const looking = { ...quiet, lastDescribeAt: 0, quietSince: 5_000 };
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((quietDescribes) =>
        quietDescribes === 0
          ? nextRunDescribeAt(looking) - 5_000
          : nextRunDescribeAt({ ...looking, lastDescribeAt: 5_000, quietDescribes }) - 5_000,
      ),
      [250, 500, 1_000, 2_000, 2_000],
    );
  });

  test('the cadences can be set', () => {
    const cadence = { runStreamQuietMs: 300, maxQuietMs: 500 };
    const streaming = { ...quiet, runStreams: 2, lastDescribeAt: 0, quietSince: 100 };
    assert.equal(nextRunDescribeAt(streaming, cadence), 400);
    assert.equal(nextRunDescribeAt({ ...streaming, lastDescribeAt: 400, quietDescribes: 3 }, cadence), 900);
  });
});
