import { Context } from '@temporalio/activity';
import { performance } from 'node:perf_hooks';
import type { TokenCounter } from '../activities/token-counter';

/** What a {@link TimedTokenCounter} measured: texts counted and the milliseconds spent counting them. */
export interface CountingTime {
  counts: number;
  /** Wall time: inflated when the machine has more work than cores. */
  milliseconds: number;
  /** The process's CPU time meanwhile (user and system, all its threads): less so. */
  cpuMilliseconds: number;
}

const NONE: CountingTime = { counts: 0, milliseconds: 0, cpuMilliseconds: 0 };

function added(left: CountingTime, right: CountingTime): CountingTime {
  return {
    counts: left.counts + right.counts,
    milliseconds: left.milliseconds + right.milliseconds,
    cpuMilliseconds: left.cpuMilliseconds + right.cpuMilliseconds,
  };
}

/** Counting done outside any activity. */
const OUTSIDE_ACTIVITIES = '(no activity)';

/** The type of the activity this count is made in (callModel, a tool, …). */
function activityType(): string {
  try {
    return Context.current().info.activityType;
  } catch {
    return OUTSIDE_ACTIVITIES;
  }
}

/**
 * A token counter that times every count of the counter it wraps, for the benchmarks: passed to
 * `createActivities` as its `tokenCounter`, it measures all the counting the activities do (model
 * calls, tools, compression, the conversation's start), in total and by activity type. `reset()`
 * starts a new measurement. With `carryCounts` off it hides the wrapped counter's encoding, so
 * the activities count every conversation whole on every call, as they did before issue 21: the
 * baseline, in the same worker.
 */
export class TimedTokenCounter implements TokenCounter {
  private measured = new Map<string, CountingTime>();

  /** Whether counts may be carried forward with the conversation (the wrapped counter's encoding shown). Default: true. */
  carryCounts = true;

  constructor(private inner: TokenCounter) {}

  /** Starts a new measurement, counting with `inner` from now on, carrying counts or not. */
  measure(inner: TokenCounter, carryCounts: boolean): void {
    this.inner = inner;
    this.carryCounts = carryCounts;
    this.reset();
  }

  get encoding(): string | undefined {
    return this.carryCounts ? this.inner.encoding : undefined;
  }

  count(text: string): number {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    try {
      return this.inner.count(text);
    } finally {
      const milliseconds = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      const type = activityType();
      this.measured.set(
        type,
        added(this.measured.get(type) ?? NONE, {
          counts: 1,
          milliseconds,
          cpuMilliseconds: (cpu.user + cpu.system) / 1000,
        }),
      );
    }
  }

  /** The counting measured since the counter was made or last reset, in all. */
  get time(): CountingTime {
    return [...this.measured.values()].reduce(added, NONE);
  }

  /** The counting measured since the counter was made or last reset, by activity type. */
  get byActivity(): ReadonlyMap<string, CountingTime> {
    return new Map(this.measured);
  }

  reset(): void {
    this.measured = new Map();
  }
}
