import { seededRandom } from '../../test/fakes/seeded-random';

/** Helpers over the project's seeded PRNG (mulberry32, test/fakes/seeded-random.ts): the same seed gives the same sequence. */
export class Random {
  private readonly generator: () => number;

  constructor(seed: number) {
    this.generator = seededRandom(seed);
  }

  /** A generator seeded from `seed` and a label, independent of every other label's sequence. */
  static derive(seed: number, label: string): Random {
    let hash = 2166136261 ^ (seed >>> 0);
    for (let index = 0; index < label.length; index += 1) {
      hash ^= label.charCodeAt(index);
      hash = Math.imul(hash, 16777619);
    }
    return new Random(hash >>> 0);
  }

  /** A float in [0, 1). */
  next(): number {
    return this.generator();
  }

  /** An integer from `minimum` to `maximum`, both included. */
  integer(minimum: number, maximum: number): number {
    return minimum + Math.floor(this.next() * (maximum - minimum + 1));
  }

  /** A float from `minimum` (included) to `maximum` (excluded). */
  between(minimum: number, maximum: number): number {
    return minimum + this.next() * (maximum - minimum);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Random.pick: no items');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A shuffled copy. */
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let index = copy.length - 1; index > 0; index -= 1) {
      const other = Math.floor(this.next() * (index + 1));
      [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
    }
    return copy;
  }
}
