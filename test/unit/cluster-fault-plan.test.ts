import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { chaosSeed, FAULT_GAP_MS, FAULT_KINDS, planFaults, type FaultKind } from '../cluster/support/fault-plan';

/*
 * The cluster tier's random fault schedule (test/cluster/support/fault-plan.ts): a seed gives one
 * schedule, every kind comes as often as planned, within its down-time range, and CHAOS_SEED
 * replays a schedule.
 */

const workers = [
  'worker-workflows-1',
  'worker-workflows-2',
  'worker-model-1',
  'worker-model-2',
  'worker-tools-1',
  'worker-tools-2',
];
const machines = ['machine-1', 'machine-2', 'machine-3'];

test('a seed gives one schedule: the same seed the same faults, gaps, down-times, worker and machine', () => {
  assert.deepEqual(planFaults(42, workers, machines), planFaults(42, workers, machines));
  const orders = new Set(
    Array.from({ length: 10 }, (_, seed) =>
      planFaults(seed, workers, machines)
        .map((fault) => fault.kind)
        .join(),
    ),
  );
  assert.ok(orders.size > 5, `10 seeds gave only ${orders.size} orders`);
});

test('every kind comes as often as planned — history and matching twice — each down within its range, after a gap within range', () => {
  for (let seed = 0; seed < 200; seed += 1) {
    const plan = planFaults(seed, workers, machines);
    for (const kind of Object.keys(FAULT_KINDS) as FaultKind[]) {
      const ofKind = plan.filter((fault) => fault.kind === kind);
      assert.equal(ofKind.length, FAULT_KINDS[kind].times, `seed ${seed}: ${kind}`);
      const [low, high] = FAULT_KINDS[kind].downMs;
      for (const fault of ofKind)
        assert.ok(fault.downMs >= low && fault.downMs <= high, `seed ${seed}: ${kind} down ${fault.downMs} ms`);
    }
    for (const fault of plan)
      assert.ok(
        fault.gapMs >= FAULT_GAP_MS[0] && fault.gapMs <= FAULT_GAP_MS[1],
        `seed ${seed}: gap ${fault.gapMs} ms`,
      );
    const killed = plan.filter((fault) => fault.kind === 'worker').map((fault) => fault.worker);
    assert.ok(
      killed.every((worker) => worker !== undefined && workers.includes(worker)),
      `seed ${seed}: worker ${killed.join()}`,
    );
    assert.ok(plan.every((fault) => (fault.kind === 'worker') === (fault.worker !== undefined)));
    const cut = plan.filter((fault) => fault.kind === 'network').map((fault) => fault.machine);
    assert.ok(
      cut.length === 1 && cut.every((machine) => machine !== undefined && machines.includes(machine)),
      `seed ${seed}: machine ${cut.join()}`,
    );
    assert.ok(plan.every((fault) => (fault.kind === 'network') === (fault.machine !== undefined)));
  }
  assert.deepEqual([FAULT_KINDS.history.times, FAULT_KINDS.matching.times], [2, 2]);
  assert.deepEqual(FAULT_KINDS.history.downMs, [5_000, 30_000], 'history back after 5–30 s (issue 20)');
  assert.deepEqual(FAULT_KINDS.seaweedfs.downMs, [30_000, 30_000], 'SeaweedFS down 30 s (issue 20)');
  assert.deepEqual(FAULT_KINDS.network.downMs, [90_000, 90_000], "a worker machine's network cut for 90 s (issue 20)");
});

test('CHAOS_SEED replays a schedule; unset, a fresh seed; not a non-negative integer, an error naming it', () => {
  assert.equal(chaosSeed({ CHAOS_SEED: '1234' }), 1234);
  assert.ok(Number.isInteger(chaosSeed({})));
  assert.throws(() => chaosSeed({ CHAOS_SEED: 'soon' }), /CHAOS_SEED must be a non-negative integer, got "soon"/);
  assert.throws(() => chaosSeed({ CHAOS_SEED: '-3' }), /CHAOS_SEED/);
});
