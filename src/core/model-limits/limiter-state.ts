/**
 * The `modelLimiter` workflow's decisions as pure functions of its state and its clock: a
 * reservation booked at the earliest time every budget allows, the real usage settled, a
 * provider's pause applied once, forgotten leases, and the problems a message's input has.
 */
import {
  DEFAULT_LEASE_SECONDS,
  MAX_RESERVATION_TOKENS,
  type ModelLimit,
  type ModelLimitGrant,
  type ModelLimitPause,
  type ModelLimitReason,
  type ModelLimitReservationRequest,
  type ModelLimitSettlement,
} from './model-limit';
import { drained, fullBucket, giveBack, resized, take, waitFor, type TokenBucket } from './token-bucket';

/** A share class's own budgets: `share` of each limit. */
export interface ShareBudgets {
  share: number;
  tokens?: TokenBucket;
  requests?: TokenBucket;
}

/** A reservation granted and not settled yet. */
export interface ModelLimitLease {
  /** Tokens reserved. */
  tokens: number;
  /** The share class it was booked in (a key of {@link ModelLimiterState.shares}). */
  share?: string;
  /** When the limiter forgets it if it was not settled (its tokens stay spent). */
  expiresAtMs: number;
}

/** What the limiter keeps (and carries through continue-as-new). */
export interface ModelLimiterState {
  limit: ModelLimit;
  tokens?: TokenBucket;
  requests?: TokenBucket;
  /** Share classes by key (`shareKey`). */
  shares: Record<string, ShareBudgets>;
  /** Nothing starts before this (a provider's 429 with retry-after); 0 when never paused. */
  pausedUntilMs: number;
  nextLease: number;
  leases: Record<string, ModelLimitLease>;
}

/** Leases kept at most; beyond it the oldest are forgotten (bounds the state a broken fleet can grow). */
export const MAX_LEASES = 5_000;

/** The longest pause a retry-after can ask for. */
export const MAX_PAUSE_MS = 5 * 60_000;

const MAX_PER_MINUTE = 1e12;

/** A limiter with no budgets yet (the first reservation configures it). */
export function emptyLimiterState(): ModelLimiterState {
  return { limit: {}, shares: {}, pausedUntilMs: 0, nextLease: 1, leases: {} };
}

/** Shares are kept to hundredths, so a fleet cannot make more than 100 classes. */
export function shareKey(share: number | undefined): string | undefined {
  if (share === undefined || share >= 1) return undefined;
  return Math.max(0.01, Math.round(share * 100) / 100).toFixed(2);
}

function bucketFor(bucket: TokenBucket | undefined, perMinute: number | undefined, nowMs: number) {
  if (perMinute === undefined) return undefined;
  return bucket ? resized(bucket, perMinute, nowMs) : fullBucket(perMinute, nowMs);
}

function scaled(perMinute: number | undefined, share: number): number | undefined {
  return perMinute === undefined ? undefined : perMinute * share;
}

/** The state with `limit` in force: buckets added, resized or removed; what they hold is kept. */
export function configured(state: ModelLimiterState, limit: ModelLimit, nowMs: number): ModelLimiterState {
  const shares: Record<string, ShareBudgets> = {};
  for (const [key, budgets] of Object.entries(state.shares)) {
    shares[key] = withBuckets(budgets, {
      tokens: bucketFor(budgets.tokens, scaled(limit.tokensPerMinute, budgets.share), nowMs),
      requests: bucketFor(budgets.requests, scaled(limit.requestsPerMinute, budgets.share), nowMs),
    });
  }
  return withBuckets(
    { ...state, limit, shares },
    {
      tokens: bucketFor(state.tokens, limit.tokensPerMinute, nowMs),
      requests: bucketFor(state.requests, limit.requestsPerMinute, nowMs),
    },
  );
}

function withBuckets<T extends { tokens?: TokenBucket; requests?: TokenBucket }>(
  value: T,
  buckets: { tokens: TokenBucket | undefined; requests: TokenBucket | undefined },
): T {
  const { tokens: _tokens, requests: _requests, ...rest } = value;
  return {
    ...rest,
    ...(buckets.tokens ? { tokens: buckets.tokens } : {}),
    ...(buckets.requests ? { requests: buckets.requests } : {}),
  } as T;
}

/** Leases past their expiry forgotten (their tokens stay spent: the provider may have counted them). */
export function withoutExpiredLeases(state: ModelLimiterState, nowMs: number): ModelLimiterState {
  const ids = Object.keys(state.leases);
  const kept = ids.filter((id) => (state.leases[id] as ModelLimitLease).expiresAtMs > nowMs);
  // The oldest first out when there are too many.
  const bounded = kept.length > MAX_LEASES ? kept.sort((a, b) => Number(a) - Number(b)).slice(-MAX_LEASES) : kept;
  if (bounded.length === ids.length) return state;
  return { ...state, leases: Object.fromEntries(bounded.map((id) => [id, state.leases[id] as ModelLimitLease])) };
}

/** Tokens a bucket is charged for a reservation: never more than it can ever hold. */
const charged = (bucket: TokenBucket, tokens: number) => Math.min(tokens, bucket.capacity);

/**
 * Books a reservation at the earliest time every budget allows — the model's tokens and requests
 * per minute, the caller's share of them, the end of a provider's pause — and takes its tokens and
 * its request from each at once, so the next reservation is booked behind it.
 */
export function reserve(
  state: ModelLimiterState,
  request: ModelLimitReservationRequest,
  nowMs: number,
): { state: ModelLimiterState; grant: ModelLimitGrant } {
  let next = withoutExpiredLeases(configured(state, request.limit, nowMs), nowMs);
  const key = shareKey(request.share);
  if (key !== undefined && !next.shares[key]) {
    const share = Number(key);
    next = {
      ...next,
      shares: {
        ...next.shares,
        [key]: withBuckets<ShareBudgets>(
          { share },
          {
            tokens: bucketFor(undefined, scaled(next.limit.tokensPerMinute, share), nowMs),
            requests: bucketFor(undefined, scaled(next.limit.requestsPerMinute, share), nowMs),
          },
        ),
      },
    };
  }
  const shareBudgets = key === undefined ? undefined : next.shares[key];
  const waits: Array<[ModelLimitReason, number]> = [['pause', Math.max(0, next.pausedUntilMs - nowMs)]];
  if (next.tokens) waits.push(['tokens', waitFor(next.tokens, charged(next.tokens, request.tokens), nowMs)]);
  if (next.requests) waits.push(['requests', waitFor(next.requests, 1, nowMs)]);
  if (shareBudgets?.tokens)
    waits.push(['share', waitFor(shareBudgets.tokens, charged(shareBudgets.tokens, request.tokens), nowMs)]);
  if (shareBudgets?.requests) waits.push(['share', waitFor(shareBudgets.requests, 1, nowMs)]);
  const [reason, waitMs] = waits.reduce((longest, wait) => (wait[1] > longest[1] ? wait : longest));

  const takeTokens = (bucket: TokenBucket | undefined) =>
    bucket && take(bucket, charged(bucket, request.tokens), nowMs);
  const takeRequest = (bucket: TokenBucket | undefined) => bucket && take(bucket, 1, nowMs);
  const leaseId = String(next.nextLease);
  const leaseMs = (next.limit.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
  next = withBuckets(
    {
      ...next,
      nextLease: next.nextLease + 1,
      leases: {
        ...next.leases,
        [leaseId]: { tokens: request.tokens, ...(key ? { share: key } : {}), expiresAtMs: nowMs + waitMs + leaseMs },
      },
      shares:
        key === undefined || !shareBudgets
          ? next.shares
          : {
              ...next.shares,
              [key]: withBuckets(shareBudgets, {
                tokens: takeTokens(shareBudgets.tokens),
                requests: takeRequest(shareBudgets.requests),
              }),
            },
    },
    { tokens: takeTokens(next.tokens), requests: takeRequest(next.requests) },
  );
  return { state: next, grant: { leaseId, waitMs, ...(waitMs > 0 ? { reason } : {}) } };
}

/**
 * A call's real usage: the tokens it reserved but did not use go back to the budgets it was
 * booked in (or, if it used more, the rest is charged). An unknown or forgotten lease changes nothing.
 */
export function settle(state: ModelLimiterState, settlement: ModelLimitSettlement, nowMs: number): ModelLimiterState {
  const lease = state.leases[settlement.leaseId];
  if (!lease) return state;
  const { [settlement.leaseId]: _settled, ...leases } = state.leases;
  const back = (bucket: TokenBucket | undefined) =>
    bucket && giveBack(bucket, charged(bucket, lease.tokens) - charged(bucket, settlement.tokens), nowMs);
  const shareBudgets = lease.share === undefined ? undefined : state.shares[lease.share];
  return withBuckets(
    {
      ...state,
      leases,
      shares:
        lease.share === undefined || !shareBudgets
          ? state.shares
          : {
              ...state.shares,
              [lease.share]: withBuckets(shareBudgets, {
                tokens: back(shareBudgets.tokens),
                requests: shareBudgets.requests,
              }),
            },
    },
    { tokens: back(state.tokens), requests: state.requests },
  );
}

/**
 * A provider's 429 with retry-after: nothing is booked before its end, and the budgets start from
 * empty (the provider's was emptier than ours). Applied once: while a pause is in force, the 429s
 * of the calls that were already under way do not extend it.
 */
export function paused(state: ModelLimiterState, pause: ModelLimitPause, nowMs: number): ModelLimiterState {
  if (state.pausedUntilMs > nowMs) return state;
  const untilMs = nowMs + Math.min(Math.max(0, pause.retryAfterMs), MAX_PAUSE_MS);
  const drain = (bucket: TokenBucket | undefined) => bucket && drained(bucket, nowMs);
  const shares = Object.fromEntries(
    Object.entries(state.shares).map(([key, budgets]) => [
      key,
      withBuckets(budgets, { tokens: drain(budgets.tokens), requests: drain(budgets.requests) }),
    ]),
  );
  return withBuckets(
    { ...state, pausedUntilMs: untilMs, shares },
    { tokens: drain(state.tokens), requests: drain(state.requests) },
  );
}

const isCount = (value: unknown, max: number) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max;

/** Why a model limit cannot be used (undefined when it can). */
export function modelLimitProblem(limit: unknown): string | undefined {
  if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) return 'the limit must be an object';
  const { tokensPerMinute, requestsPerMinute, reservedOutputTokens, leaseSeconds } = limit as Record<string, unknown>;
  for (const [name, value] of Object.entries({ tokensPerMinute, requestsPerMinute })) {
    if (value !== undefined && (!isCount(value, MAX_PER_MINUTE) || (value as number) <= 0))
      return `${name} must be a number above 0 and at most ${MAX_PER_MINUTE}`;
  }
  if (tokensPerMinute === undefined && requestsPerMinute === undefined)
    return 'the limit needs tokensPerMinute or requestsPerMinute';
  if (reservedOutputTokens !== undefined && !isCount(reservedOutputTokens, MAX_RESERVATION_TOKENS))
    return `reservedOutputTokens must be a number from 0 to ${MAX_RESERVATION_TOKENS}`;
  if (leaseSeconds !== undefined && (!isCount(leaseSeconds, 86_400) || (leaseSeconds as number) < 1))
    return 'leaseSeconds must be a number from 1 to 86400';
  return undefined;
}

/** Why the limiter refuses a reservation request (undefined when it takes it). */
export function reservationProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'the reservation must be an object';
  const { limit, tokens, share } = request as Record<string, unknown>;
  const limitProblem = modelLimitProblem(limit);
  if (limitProblem) return limitProblem;
  if (!isCount(tokens, MAX_RESERVATION_TOKENS)) return `tokens must be a number from 0 to ${MAX_RESERVATION_TOKENS}`;
  if (share !== undefined && (!isCount(share, 1) || (share as number) <= 0))
    return 'share must be a number above 0 and at most 1';
  return undefined;
}

/** Whether a settlement can be read (a bad one is dropped by the limiter). */
export function isSettlement(value: unknown): value is ModelLimitSettlement {
  if (typeof value !== 'object' || value === null) return false;
  const { leaseId, tokens } = value as Record<string, unknown>;
  return typeof leaseId === 'string' && leaseId.length <= 20 && isCount(tokens, MAX_RESERVATION_TOKENS);
}

/** Whether a pause can be read (a bad one is dropped by the limiter). */
export function isPause(value: unknown): value is ModelLimitPause {
  if (typeof value !== 'object' || value === null) return false;
  return isCount((value as Record<string, unknown>).retryAfterMs, Number.MAX_SAFE_INTEGER);
}
