import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { forEachAtMost, TaskSlots } from '../../src/core/task-slots';

/** A task that ends when told to. */
function gate(): { promise: Promise<void>; open: () => void; fail: (error: Error) => void } {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TaskSlots', () => {
  test('a free slot is waited for; a settled task gives its slot back', async () => {
    const slots = new TaskSlots(2);
    const first = gate();
    const second = gate();
    void slots.run(() => first.promise);
    const secondRun = slots.run(() => second.promise).catch((error: Error) => error.message);
    assert.equal(slots.running, 2);
    let freed = false;
    void slots.free().then(() => (freed = true));
    await settle();
    assert.equal(freed, false);
    first.open();
    await settle();
    assert.equal(freed, true);
    assert.equal(slots.running, 1);
    second.fail(new Error('x'));
    assert.equal(await secondRun, 'x', 'run passes the failure on');
    assert.equal(slots.running, 0, 'a failed task gives its slot back too');
  });

  test('a slot taken by hand is given back once, where the task says', async () => {
    const slots = new TaskSlots(1);
    const giveBack = slots.take();
    let idle = false;
    void slots.idle().then(() => (idle = true));
    await settle();
    assert.equal(idle, false);
    giveBack();
    giveBack();
    await settle();
    assert.equal(idle, true);
    assert.equal(slots.running, 0);
  });

  test('waits go through the waitUntil given (condition in workflows), with the stop condition', async () => {
    const asked: boolean[] = [];
    const slots = new TaskSlots(1, async (ready) => {
      asked.push(ready());
    });
    slots.take();
    let stopped = false;
    await slots.free(() => stopped);
    stopped = true;
    await slots.free(() => stopped);
    assert.deepEqual(asked, [false, true]);
  });
});

describe('forEachAtMost', () => {
  test('runs every item, at most `limit` at once, starting them in order', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await forEachAtMost([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      started.push(item);
      running += 1;
      most = Math.max(most, running);
      await settle();
      running -= 1;
    });
    assert.deepEqual(started, [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(most, 3);
    assert.equal(running, 0);
  });

  test('after a failure starts nothing more, lets the running ones end, and throws the first failure', async () => {
    const started: number[] = [];
    let ended = 0;
    await assert.rejects(
      forEachAtMost([1, 2, 3, 4, 5], 2, async (item) => {
        started.push(item);
        await settle();
        if (item === 1) throw new Error('first');
        await settle();
        await settle();
        ended += 1;
      }),
      /first/,
    );
    assert.deepEqual(started, [1, 2]);
    assert.equal(ended, 1, 'the running task ended before the failure was thrown');
  });

  test('a limit below 1 runs one at a time; no items, nothing', async () => {
    const order: number[] = [];
    await forEachAtMost([1, 2], 0, async (item) => {
      order.push(item);
    });
    assert.deepEqual(order, [1, 2]);
    await forEachAtMost([], 4, async () => assert.fail('no work'));
  });
});
