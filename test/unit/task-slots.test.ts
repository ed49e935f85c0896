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

  test('whenFree: at once when a slot is free, else in the step a task gives its slot back', async () => {
    const slots = new TaskSlots(1);
    const calls: string[] = [];
    await slots.whenFree(() => calls.push('free now'));
    assert.deepEqual(calls, ['free now'], 'called before whenFree returned');
    const giveBack = slots.take();
    await slots.whenFree(() => calls.push(`handed on, ${slots.running} running`));
    assert.equal(calls.length, 1);
    giveBack();
    assert.deepEqual(calls, ['free now', 'handed on, 0 running'], 'called inside the giving back');
  });

  test('whenFree through a waitUntil: a step after the wait ends; a failed wait fails it', async () => {
    let release!: () => void;
    const slots = new TaskSlots(1, () => new Promise<void>((resolve) => (release = resolve)));
    const calls: string[] = [];
    const waited = slots.whenFree(() => calls.push('after the wait'));
    release();
    assert.deepEqual(calls, []);
    await waited;
    assert.deepEqual(calls, ['after the wait']);
    const failing = new TaskSlots(1, () => Promise.reject(new Error('cancelled')));
    await assert.rejects(
      failing.whenFree(() => assert.fail('not called')),
      /cancelled/,
    );
  });

  test('acquire: at most the limit at once, first come first served; an aborted waiter leaves the queue', async () => {
    const slots = new TaskSlots(1);
    const releaseFirst = await slots.acquire();
    const order: string[] = [];
    const aborted = new AbortController();
    const second = slots.acquire().then((release) => {
      order.push('second');
      return release;
    });
    const third = slots.acquire(aborted.signal).then(
      () => order.push('third'),
      () => order.push('third aborted'),
    );
    const fourth = slots.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    aborted.abort(new Error('cancelled'));
    await third;
    assert.equal(slots.running, 1);
    releaseFirst();
    releaseFirst();
    (await second)();
    (await fourth)();
    assert.deepEqual(order, ['third aborted', 'second', 'fourth']);
    assert.equal(slots.running, 0);
    const gone = new AbortController();
    gone.abort(new Error('gone'));
    const held = await slots.acquire(gone.signal);
    assert.equal(slots.running, 1, 'a free slot is taken whatever the signal says, as before');
    await assert.rejects(
      slots.acquire(gone.signal),
      /gone/,
      'a caller that would wait with an aborted signal does not',
    );
    held();
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

  test('a slot passes straight on: the next item starts in the step the last one ended', async () => {
    const first = gate();
    const log: string[] = [];
    const done = forEachAtMost([1, 2], 1, (item) => {
      log.push(`start ${item}`);
      return item === 1 ? first.promise : Promise.resolve();
    });
    void first.promise.then(() => log.push('the step after the end of 1'));
    first.open();
    await done;
    assert.deepEqual(log, ['start 1', 'start 2', 'the step after the end of 1']);
  });

  test('othersGoOn: a slot whose task failed takes no more; the others go on; the first failure is thrown', async () => {
    const started: number[] = [];
    const gates = new Map([1, 2, 3, 4, 5].map((item) => [item, gate()]));
    const done = forEachAtMost(
      [1, 2, 3, 4, 5],
      2,
      async (item) => {
        started.push(item);
        await gates.get(item)?.promise;
      },
      { othersGoOn: true },
    );
    gates.get(1)?.fail(new Error('first'));
    await settle();
    assert.deepEqual(started, [1, 2], 'the failed slot stays taken');
    for (const item of [2, 3, 4]) {
      gates.get(item)?.open();
      await settle();
    }
    gates.get(5)?.fail(new Error('second'));
    await assert.rejects(done, /first/);
    assert.deepEqual(started, [1, 2, 3, 4, 5]);
  });

  test('othersGoOn: when every slot failed, the items left are not started', async () => {
    const started: number[] = [];
    await assert.rejects(
      forEachAtMost(
        [1, 2, 3],
        2,
        async (item) => {
          started.push(item);
          throw new Error(`failed ${item}`);
        },
        { othersGoOn: true },
      ),
      /failed 1/,
    );
    assert.deepEqual(started, [1, 2]);
  });

  test('through a waitUntil: each item waits for it; a failed wait fails the whole at once', async () => {
    const asked: boolean[] = [];
    const ran: number[] = [];
    await forEachAtMost([1, 2, 3], 2, async (item) => void ran.push(item), {
      waitUntil: async (ready) => {
        asked.push(ready());
      },
    });
    assert.deepEqual(ran, [1, 2, 3]);
    assert.equal(asked.length, 3, 'one wait per item');
    const running = gate();
    let cancel!: (error: Error) => void;
    const cancelled = new Promise<never>((_, reject) => (cancel = reject));
    const whole = forEachAtMost([1, 2], 1, () => running.promise, {
      waitUntil: (ready) => (ready() ? Promise.resolve() : cancelled),
    });
    await settle();
    cancel(new Error('cancelled'));
    await assert.rejects(whole, /cancelled/, 'without waiting for the running item');
    running.open();
  });
});
