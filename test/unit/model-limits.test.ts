import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  emptyLimiterState,
  isPause,
  isSettlement,
  MAX_PAUSE_MS,
  modelLimitProblem,
  paused,
  reservationProblem,
  reserve,
  settle,
  shareKey,
  withoutExpiredLeases,
  type ModelLimiterState,
} from '../../src/core/model-limits/limiter-state';
import type { ModelLimit, ModelLimitReservationRequest } from '../../src/core/model-limits/model-limit';
import { fullBucket, giveBack, levelAt, take, waitFor } from '../../src/core/model-limits/token-bucket';

const TPM: ModelLimit = { tokensPerMinute: 60_000 }; // 1 token per ms
const T0 = 1_000_000;

/** Books each request in turn at its time; returns the waits and the final state. */
function book(requests: Array<[number, Partial<ModelLimitReservationRequest>]>, limit: ModelLimit = TPM) {
  let state: ModelLimiterState = emptyLimiterState();
  const waits: number[] = [];
  const leases: string[] = [];
  for (const [at, request] of requests) {
    const booked = reserve(state, { limit, tokens: 0, ...request }, at);
    state = booked.state;
    waits.push(booked.grant.waitMs);
    leases.push(booked.grant.leaseId);
  }
  return { state, waits, leases };
}

describe('token bucket', () => {
  test('starts full, refills at its rate up to its capacity', () => {
    const bucket = take(fullBucket(600, T0), 600, T0);
    assert.equal(levelAt(bucket, T0), 0);
    assert.equal(levelAt(bucket, T0 + 30_000), 300);
    assert.equal(levelAt(bucket, T0 + 600_000), 600);
  });
  test('a reservation beyond the level is booked when the refill covers it', () => {
    const bucket = take(fullBucket(600, T0), 500, T0);
    assert.equal(waitFor(bucket, 100, T0), 0);
    assert.equal(waitFor(bucket, 200, T0), 10_000);
  });
  test('giving back never fills beyond capacity', () => {
    assert.equal(levelAt(giveBack(fullBucket(600, T0), 1_000, T0), T0), 600);
  });
});

describe('reservations', () => {
  test('within the budget they start at once; beyond it each is booked behind the ones before (first come, first served)', () => {
    const { waits } = book([
      [T0, { tokens: 40_000 }],
      [T0, { tokens: 20_000 }],
      [T0, { tokens: 10_000 }],
      [T0, { tokens: 10_000 }],
    ]);
    assert.deepEqual(waits, [0, 0, 10_000, 20_000]);
  });

  test('the wait says which limit it is for', () => {
    const state = book([[T0, { tokens: 60_000 }]]).state;
    assert.equal(reserve(state, { limit: TPM, tokens: 10 }, T0).grant.reason, 'tokens');
    const requests = book([[T0, {}]], { requestsPerMinute: 1 }).state;
    const next = reserve(requests, { limit: { requestsPerMinute: 1 }, tokens: 0 }, T0).grant;
    assert.deepEqual([next.waitMs, next.reason], [60_000, 'requests']);
  });

  test('settling gives back the reserved tokens a call did not use, and charges the ones it used beyond', () => {
    const { state, leases } = book([[T0, { tokens: 60_000 }]]);
    const afterUse = settle(state, { leaseId: leases[0] as string, tokens: 15_000 }, T0);
    assert.equal(reserve(afterUse, { limit: TPM, tokens: 45_000 }, T0).grant.waitMs, 0);
    assert.deepEqual(afterUse.leases, {});
    const { state: small, leases: smallLeases } = book([[T0, { tokens: 1_000 }]]);
    const overUse = settle(small, { leaseId: smallLeases[0] as string, tokens: 31_000 }, T0);
    assert.equal(reserve(overUse, { limit: TPM, tokens: 30_000 }, T0).grant.waitMs, 1_000);
  });

  test('settling an unknown or already settled lease changes nothing', () => {
    const { state, leases } = book([[T0, { tokens: 60_000 }]]);
    const once = settle(state, { leaseId: leases[0] as string, tokens: 0 }, T0);
    assert.equal(settle(once, { leaseId: leases[0] as string, tokens: 0 }, T0), once);
    assert.equal(settle(state, { leaseId: 'nope', tokens: 0 }, T0), state);
  });

  test('a lease never settled (its worker died) is forgotten after its lease time, its tokens staying spent', () => {
    const limit = { ...TPM, leaseSeconds: 30 };
    const { state } = book([[T0, { tokens: 60_000 }]], limit);
    assert.equal(Object.keys(withoutExpiredLeases(state, T0 + 29_999).leases).length, 1);
    const later = withoutExpiredLeases(state, T0 + 30_000);
    assert.deepEqual(later.leases, {});
    // The budget refilled on its own in the meantime: the next call starts at once.
    assert.equal(reserve(later, { limit, tokens: 30_000 }, T0 + 30_000).grant.waitMs, 0);
  });

  test('a reservation larger than the whole budget waits for a full budget, not forever', () => {
    const { waits } = book([
      [T0, { tokens: 1 }],
      [T0, { tokens: 500_000 }],
    ]);
    assert.equal(waits[1], 1);
  });
});

describe('a provider pause', () => {
  test('nothing is booked before its end, the budget starts from empty, and a second 429 during it does not extend it', () => {
    const { state } = book([[T0, { tokens: 1_000 }]]);
    const pausedOnce = paused(state, { retryAfterMs: 5_000 }, T0);
    assert.equal(pausedOnce.pausedUntilMs, T0 + 5_000);
    assert.equal(paused(pausedOnce, { retryAfterMs: 20_000 }, T0 + 1_000), pausedOnce);
    const grant = reserve(pausedOnce, { limit: TPM, tokens: 2_000 }, T0 + 1_000).grant;
    // Refilled 1 000 tokens a second from empty at T0: 2 000 are there at T0 + 2 s, but the pause holds until T0 + 5 s.
    assert.deepEqual([grant.waitMs, grant.reason], [4_000, 'pause']);
    const afterIt = paused(pausedOnce, { retryAfterMs: 3_000 }, T0 + 6_000);
    assert.equal(afterIt.pausedUntilMs, T0 + 9_000);
  });
  test('a retry-after is bounded', () => {
    assert.equal(paused(emptyLimiterState(), { retryAfterMs: 1e12 }, T0).pausedUntilMs, T0 + MAX_PAUSE_MS);
  });
});

describe('a batch share', () => {
  test('runs with a share use at most that share of the limit; runs without one can use the rest', () => {
    const { waits, state } = book([
      [T0, { tokens: 30_000, share: 0.5 }],
      [T0, { tokens: 10_000, share: 0.5 }],
    ]);
    // The share's budget (30 000 a minute, 500 a second) is spent: the next batch call waits 20 s.
    assert.equal(waits[1], 20_000);
    // An interactive call still finds the other half of the limit.
    assert.equal(reserve(state, { limit: TPM, tokens: 20_000 }, T0).grant.waitMs, 0);
    assert.equal(reserve(state, { limit: TPM, tokens: 1, share: 0.5 }, T0).grant.reason, 'share');
  });
  test('shares are kept to hundredths, the whole limit has none', () => {
    assert.equal(shareKey(0.333333), '0.33');
    assert.equal(shareKey(0.001), '0.01');
    assert.equal(shareKey(1), undefined);
    assert.equal(shareKey(undefined), undefined);
  });
});

describe('a changed configuration', () => {
  test('takes effect at the next reservation, keeping what the budget holds', () => {
    const { state } = book([[T0, { tokens: 60_000 }]]);
    const grant = reserve(state, { limit: { tokensPerMinute: 120_000 }, tokens: 2_000 }, T0).grant;
    assert.equal(grant.waitMs, 1_000);
  });
});

describe('hostile messages', () => {
  test('reservations with bad numbers are refused with a reason', () => {
    assert.match(reservationProblem(null) ?? '', /object/);
    assert.match(reservationProblem({ limit: {}, tokens: 1 }) ?? '', /tokensPerMinute or requestsPerMinute/);
    assert.match(reservationProblem({ limit: { tokensPerMinute: -1 }, tokens: 1 }) ?? '', /tokensPerMinute/);
    assert.match(reservationProblem({ limit: TPM, tokens: Number.NaN }) ?? '', /tokens/);
    assert.match(reservationProblem({ limit: TPM, tokens: 1e15 }) ?? '', /tokens/);
    assert.match(reservationProblem({ limit: TPM, tokens: 1, share: 0 }) ?? '', /share/);
    assert.match(reservationProblem({ limit: TPM, tokens: 1, share: 2 }) ?? '', /share/);
    assert.equal(reservationProblem({ limit: TPM, tokens: 1, share: 0.5 }), undefined);
    assert.match(modelLimitProblem({ tokensPerMinute: 1, leaseSeconds: 0 }) ?? '', /leaseSeconds/);
  });
  test('settlements and pauses that cannot be read are recognised', () => {
    assert.equal(isSettlement({ leaseId: '1', tokens: 3 }), true);
    assert.equal(isSettlement({ leaseId: 1, tokens: 3 }), false);
    assert.equal(isSettlement({ leaseId: 'x'.repeat(100), tokens: 3 }), false);
    assert.equal(isPause({ retryAfterMs: 1 }), true);
    assert.equal(isPause({ retryAfterMs: -1 }), false);
    assert.equal(isPause('soon'), false);
  });
});
