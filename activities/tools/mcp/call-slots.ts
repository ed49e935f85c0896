/**
 * At most `limit` calls at once (a server's `maxConcurrentCalls`); the others wait in order. A
 * waiting call whose signal aborts leaves the queue.
 */
export class CallSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number = Number.POSITIVE_INFINITY) {}

  /** Waits for a slot; the returned function gives it back (call it exactly once). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.limit) {
      this.running += 1;
      return this.releaser();
    }
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  /** Calls running now. */
  get busy(): number {
    return this.running;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next caller; the count stays.
      if (next) next();
      else this.running -= 1;
    };
  }
}
