/**
 * Bounded concurrency, one way: {@link TaskSlots} counts the tasks running against a limit and
 * waits for a free slot; {@link forEachAtMost} runs work over items through it (src/core/README.md
 * says which site uses what). Workflow-safe: it waits only on promises it settles itself, or
 * through the `waitUntil` it is given.
 *
 * Workflows replay what they recorded only if their commands keep their order, so how a wait ends
 * is part of the contract, and the steps below are exact (test/unit/task-slots-steps.test.ts holds
 * them to the loops they replaced): without a `waitUntil` a slot passes straight on, the next task
 * starting in the step the last one ended; through `condition` the next task starts where Temporal
 * checks conditions, after the activation's jobs and their microtasks.
 */

/** Waits until `ready()` holds. In workflow code: `condition` from `@temporalio/workflow`. */
export type WaitUntil = (ready: () => boolean) => Promise<unknown>;

const never = (): boolean => false;

/**
 * At most `limit` tasks running at once. A loop asks for a free slot ({@link TaskSlots.free},
 * {@link TaskSlots.whenFree}), then starts its task in it ({@link TaskSlots.run}, or
 * {@link TaskSlots.take} to give it back at a point of its own); callers that each want one slot
 * queue for it with {@link TaskSlots.acquire}.
 */
export class TaskSlots {
  private count = 0;
  /** Callbacks waiting for their `ready()`, in the order they came; called as slots are given back. */
  private readonly waiters = new Set<() => void>();

  /**
   * @param limit how many tasks may run at once (at least 1).
   * @param waitUntil how to wait for a condition; in a workflow `condition`, where a wait ends
   * once the activation's jobs and their microtasks ran. Without one, a wait ends in the step a
   * task gives its slot back (its `orWhen` is looked at then, so it should only change when a
   * task does).
   */
  constructor(
    readonly limit: number,
    private readonly waitUntil?: WaitUntil,
  ) {}

  /** How many tasks are running. */
  get running(): number {
    return this.count;
  }

  /** Waits until a slot is free, or until `orWhen()` holds (the loop stops: cancelled, failed). */
  free(orWhen: () => boolean = never): Promise<unknown> {
    return this.wait(() => this.count < this.limit || orWhen());
  }

  /** Waits until no task runs, or until `orWhen()` holds. */
  idle(orWhen: () => boolean = never): Promise<unknown> {
    return this.wait(() => this.count === 0 || orWhen());
  }

  /**
   * Calls `then` once a slot is free or `orWhen()` holds: without a `waitUntil` in the same step,
   * now or as the task that frees the slot gives it back, so the slot passes straight on; with
   * one, a step after its wait ends (as code after `await free()` would run). The promise fails
   * when the wait does (a cancelled `condition`) or `then` throws.
   */
  whenFree(then: () => void, orWhen: () => boolean = never): Promise<void> {
    const ready = () => this.count < this.limit || orWhen();
    if (this.waitUntil) return this.waitUntil(ready).then(then);
    this.whenReady(ready, then);
    return Promise.resolve();
  }

  /**
   * Takes a slot now (even when none is free: ask {@link TaskSlots.free} first); the function
   * returned gives it back, once, where the task ends. For a task that must give its slot back at
   * an exact point of its own (a workflow whose histories fix that point); else {@link TaskSlots.run}.
   */
  take(): () => void {
    this.count += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.count -= 1;
      for (const wake of [...this.waiters]) wake();
    };
  }

  /** Starts a task in a slot, taken now (as {@link TaskSlots.take}) and given back when the task settles. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const giveBack = this.take();
    let started: Promise<T>;
    try {
      started = task();
    } catch (error) {
      started = Promise.reject(error);
    }
    return started.finally(giveBack);
  }

  /**
   * Waits for a free slot, first come first served, and takes it; the function returned gives it
   * back (as {@link TaskSlots.take}). A caller whose `signal` aborts while it waits leaves the
   * queue, rejected with the signal's reason. Outside workflows (not through a `waitUntil`).
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.waitUntil) throw new Error('TaskSlots.acquire waits for its own slots; it takes no waitUntil');
    if (this.count < this.limit) return Promise.resolve(this.take());
    try {
      signal?.throwIfAborted();
    } catch (reason) {
      return Promise.reject(reason);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(wake);
        reject(signal?.reason);
      };
      const wake = this.whenReady(
        () => this.count < this.limit,
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take());
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wait(ready: () => boolean): Promise<unknown> {
    if (this.waitUntil) return this.waitUntil(ready);
    return new Promise<void>((resolve) => this.whenReady(ready, resolve));
  }

  /** Calls `then` now if `ready()`, else in the first giving back after which it is; returns the waiter (to drop it). */
  private whenReady(ready: () => boolean, then: () => void): () => void {
    const wake = () => {
      if (!ready()) return;
      this.waiters.delete(wake);
      then();
    };
    if (ready()) then();
    else this.waiters.add(wake);
    return wake;
  }
}

/** How {@link forEachAtMost} goes through its items. */
export interface ForEachOptions {
  /**
   * How to wait for a free slot: in a workflow, `condition`, so the next item starts where
   * Temporal checks conditions, and a cancelled wait fails the whole at once. Without it a slot
   * passes straight to the next item, in the step its task ended.
   */
  waitUntil?: WaitUntil;
  /**
   * After a failure, the slots whose tasks did not fail go on through the items (a slot whose
   * task failed takes no more); without it, nothing more starts after a failure.
   */
  othersGoOn?: boolean;
}

/**
 * Runs `work` over `items`, starting them in order, at most `limit` (at least 1) at a time: while
 * an item is left, it waits for a free slot, then starts the item in it. After a failure it starts
 * nothing more (see {@link ForEachOptions.othersGoOn}), lets the running ones end, and throws the
 * first failure.
 */
export async function forEachAtMost<T>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<unknown>,
  options: ForEachOptions = {},
): Promise<void> {
  const slots = new TaskSlots(Math.max(1, limit), options.waitUntil);
  const pending = items[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  /** Slots whose task failed, kept (not given back) while the others go on. */
  let retired = 0;
  let exhausted = false;
  const stopped = () => failure !== undefined && !options.othersGoOn;
  let end!: (outcome: { waitFailed?: unknown }) => void;
  const ended = new Promise<{ waitFailed?: unknown }>((resolve) => (end = resolve));
  const endIfDone = () => {
    if ((exhausted || retired === slots.limit) && slots.running === retired) end({});
  };
  const stop = () => {
    exhausted = true;
    endIfDone();
  };

  const start = (item: T) => {
    const giveBack = slots.take();
    let task: Promise<unknown>;
    try {
      task = work(item);
    } catch (error) {
      task = Promise.reject(error);
    }
    task.then(
      () => {
        giveBack();
        endIfDone();
      },
      (error: unknown) => {
        // Noted before the slot is given back, so the wait it ends sees it.
        failure ??= { error };
        if (options.othersGoOn) retired += 1;
        else giveBack();
        endIfDone();
      },
    );
  };
  /** While an item is left: wait for a free slot, start the item in it (unless stopped), and on. */
  const startNext = (): void => {
    const next = pending.next();
    if (next.done) return stop();
    slots
      .whenFree(() => {
        if (stopped()) return stop();
        start(next.value);
        startNext();
      }, stopped)
      .catch((error: unknown) => end({ waitFailed: error }));
  };
  startNext();

  const outcome = await ended;
  if ('waitFailed' in outcome) throw outcome.waitFailed;
  if (failure) throw failure.error;
}
