import { performance } from 'node:perf_hooks';
import type { TokenCounter } from '../activities/token-counter';

/** What a {@link TimedTokenCounter} measured: texts counted and the milliseconds spent counting them. */
export interface CountingTime {
  counts: number;
  milliseconds: number;
}

/**
 * A token counter that times every count of the counter it wraps, for the benchmarks: passed to
 * `createActivities` as its `tokenCounter`, it measures all the counting the activities do (model
 * calls, tools, compression, the conversation's start). `reset()` starts a new measurement.
 */
export class TimedTokenCounter implements TokenCounter {
  private measured: CountingTime = { counts: 0, milliseconds: 0 };

  constructor(private readonly inner: TokenCounter) {}

  count(text: string): number {
    const started = performance.now();
    try {
      return this.inner.count(text);
    } finally {
      this.measured = { counts: this.measured.counts + 1, milliseconds: this.measured.milliseconds + performance.now() - started };
    }
  }

  /** The counting measured since the counter was made or last reset. */
  get time(): CountingTime {
    return this.measured;
  }

  reset(): void {
    this.measured = { counts: 0, milliseconds: 0 };
  }
}
