import { seededRandom } from '../../fakes/seeded-random';

/** The kinds of fault the chaos test injects into the production stack. */
export type FaultKind = 'history' | 'matching' | 'frontend' | 'postgresql' | 'seaweedfs' | 'worker' | 'network';

/** One planned fault: wait `gapMs` after the previous fault was restored, break the part, keep it down `downMs`, restore it. */
export interface PlannedFault {
  kind: FaultKind;
  gapMs: number;
  downMs: number;
  /** For `worker`: the worker process SIGKILLed. */
  worker?: string;
  /** For `network`: the worker machine whose link is cut. */
  machine?: string;
}

/**
 * How often each kind happens and how long the part stays down (ms, drawn uniformly between the
 * bounds). History: the 5–30 s; SeaweedFS: its 30 s; a worker machine's link: its 90 s;
 * the others short, as a restart is.
 */
export const FAULT_KINDS: Readonly<Record<FaultKind, { times: number; downMs: readonly [number, number] }>> = {
  history: { times: 2, downMs: [5_000, 30_000] },
  matching: { times: 2, downMs: [2_000, 10_000] },
  frontend: { times: 1, downMs: [0, 3_000] },
  postgresql: { times: 1, downMs: [3_000, 15_000] },
  seaweedfs: { times: 1, downMs: [30_000, 30_000] },
  worker: { times: 1, downMs: [1_000, 5_000] },
  network: { times: 1, downMs: [90_000, 90_000] },
};

/** Gap between one fault's restore and the next fault, drawn uniformly between these (ms). */
export const FAULT_GAP_MS: readonly [number, number] = [3_000, 12_000];

/**
 * The seed of the chaos schedule: `CHAOS_SEED` when set (to replay a schedule), else a fresh one.
 * @throws Error when `CHAOS_SEED` is not a non-negative integer.
 */
export function chaosSeed(environment: NodeJS.ProcessEnv = process.env): number {
  const given = environment.CHAOS_SEED;
  if (given === undefined || given === '') return Math.floor(Math.random() * 1_000_000);
  if (!/^\d+$/.test(given)) throw new Error(`CHAOS_SEED must be a non-negative integer, got ${JSON.stringify(given)}`);
  return Number(given);
}

/**
 * A fault schedule from a seed: every kind of {@link FAULT_KINDS} as often as it says, in a random
 * order, each after a random gap and down for a random time; the worker killed is one of
 * `workers`, the machine cut off one of `machines`, at random. The same seed, workers and
 * machines give the same schedule.
 */
export function planFaults(seed: number, workers: readonly string[], machines: readonly string[]): PlannedFault[] {
  const random = seededRandom(seed);
  const between = ([low, high]: readonly [number, number]) => Math.round(low + random() * (high - low));
  const kinds = (Object.keys(FAULT_KINDS) as FaultKind[]).flatMap((kind) =>
    Array.from({ length: FAULT_KINDS[kind].times }, () => kind),
  );
  // Fisher–Yates with the seeded generator.
  for (let index = kinds.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [kinds[index], kinds[other]] = [kinds[other] as FaultKind, kinds[index] as FaultKind];
  }
  return kinds.map((kind) => {
    const fault: PlannedFault = { kind, gapMs: between(FAULT_GAP_MS), downMs: between(FAULT_KINDS[kind].downMs) };
    if (kind === 'worker') fault.worker = workers[Math.floor(random() * workers.length)];
    if (kind === 'network') fault.machine = machines[Math.floor(random() * machines.length)];
    return fault;
  });
}
