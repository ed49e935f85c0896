/**
 * Bounded concurrency, one way for the loops that start tasks one by one: a batch's child runs,
 * an evaluation's judge activities, the deletions of `react-agent gc`. Workflow-safe: it keeps a
 * count and waits only through the `waitUntil` it is given.
 */

/** Waits until `ready()` holds. In workflow code: `condition` from `@temporalio/workflow`. */
export type WaitUntil = (ready: () => boolean) => Promise<unknown>;

/**
 * At most `limit` tasks running at once. A loop asks for a free slot ({@link TaskSlots.free}),
 * then starts its task in it ({@link TaskSlots.run}); the slot is given back when the task settles.
 *
 * In a workflow, pass `condition` as `waitUntil`: a wait then unblocks where Temporal checks
 * conditions (after the activation's jobs and their microtasks), so the loop issues the same
 * commands in the same order as the counter and `condition` it replaces.
 */
export class TaskSlots {
  private count = 0;
  private readonly waiters = new Set<() => void>();
  private readonly waitUntil: WaitUntil;

  /**
   * @param limit how many tasks may run at once (at least 1).
   * @param waitUntil how to wait for a condition. Default (outside workflows): the condition is
   * checked again each time a task settles, so an `orWhen` given to {@link TaskSlots.free} or
   * {@link TaskSlots.idle} should only change when a task does.
   */
  constructor(
    readonly limit: number,
    waitUntil?: WaitUntil,
  ) {
    this.waitUntil = waitUntil ?? ((ready) => this.whenSettled(ready));
  }

  /** How many tasks are running. */
  get running(): number {
    return this.count;
  }

  /** Waits until a slot is free, or until `orWhen()` holds (the loop stops: cancelled, failed). */
  free(orWhen: () => boolean = () => false): Promise<unknown> {
    return this.waitUntil(() => this.count < this.limit || orWhen());
  }

  /** Waits until no task runs, or until `orWhen()` holds. */
  idle(orWhen: () => boolean = () => false): Promise<unknown> {
    return this.waitUntil(() => this.count === 0 || orWhen());
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

  /** The default wait: `ready()` now, or again each time a task settles. */
  private whenSettled(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        if (!ready()) return;
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }
}

/**
 * Runs `work` over `items`, at most `limit` at a time, in order; after a failure starts nothing
 * more, waits for the running ones, and throws the first failure. Outside workflows (it waits
 * with {@link TaskSlots}' default).
 */
export async function forEachAtMost<T>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const slots = new TaskSlots(Math.max(1, limit));
  let failure: { error: unknown } | undefined;
  const started: Promise<void>[] = [];
  for (const item of items) {
    await slots.free(() => failure !== undefined);
    if (failure) break;
    // The failure is noted before the slot is given back, so the loop sees it before starting another.
    started.push(
      slots.run(async () => {
        try {
          await work(item);
        } catch (error) {
          failure ??= { error };
        }
      }),
    );
  }
  await Promise.all(started);
  if (failure) throw failure.error;
}
