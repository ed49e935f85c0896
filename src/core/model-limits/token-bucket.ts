/**
 * A token bucket kept in virtual time: `level` tokens at `asOfMs`, refilled at `perMs` up to
 * `capacity`. A reservation takes its tokens at once and may leave the level below zero: the debt
 * is the reservations booked in the future, so the next one waits behind them (first come, first
 * served), and the caller is told when its tokens will be there instead of being made to wait
 * inside the limiter.
 */
export interface TokenBucket {
  capacity: number;
  perMs: number;
  level: number;
  asOfMs: number;
}

/** A full bucket of `perMinute` a minute (a minute's worth of burst, as providers allow). */
export function fullBucket(perMinute: number, nowMs: number): TokenBucket {
  return { capacity: perMinute, perMs: perMinute / 60_000, level: perMinute, asOfMs: nowMs };
}

/** The level at `nowMs` (never before `asOfMs`). */
export function levelAt(bucket: TokenBucket, nowMs: number): number {
  const elapsed = Math.max(0, nowMs - bucket.asOfMs);
  return Math.min(bucket.capacity, bucket.level + elapsed * bucket.perMs);
}

/** The bucket brought to `nowMs`. */
function at(bucket: TokenBucket, nowMs: number): TokenBucket {
  return { ...bucket, level: levelAt(bucket, nowMs), asOfMs: Math.max(nowMs, bucket.asOfMs) };
}

/** Milliseconds from `nowMs` until `amount` tokens are there for a new reservation. */
export function waitFor(bucket: TokenBucket, amount: number, nowMs: number): number {
  const level = levelAt(bucket, nowMs);
  if (level >= amount) return 0;
  return Math.ceil((amount - level) / bucket.perMs);
}

/** `amount` tokens taken at `nowMs` (the level may go below zero: booked in the future). */
export function take(bucket: TokenBucket, amount: number, nowMs: number): TokenBucket {
  const current = at(bucket, nowMs);
  return { ...current, level: current.level - amount };
}

/** `amount` tokens given back at `nowMs` (negative: charged), never above capacity. */
export function giveBack(bucket: TokenBucket, amount: number, nowMs: number): TokenBucket {
  const current = at(bucket, nowMs);
  return { ...current, level: Math.min(current.capacity, current.level + amount) };
}

/** The bucket emptied at `nowMs` if it held anything (after a provider's 429: it was not as full as we thought). */
export function drained(bucket: TokenBucket, nowMs: number): TokenBucket {
  const current = at(bucket, nowMs);
  return { ...current, level: Math.min(current.level, 0) };
}

/** The bucket with a new rate per minute: what it holds is kept, cut to the new capacity. */
export function resized(bucket: TokenBucket, perMinute: number, nowMs: number): TokenBucket {
  if (bucket.capacity === perMinute) return bucket;
  const current = at(bucket, nowMs);
  return { capacity: perMinute, perMs: perMinute / 60_000, level: Math.min(current.level, perMinute), asOfMs: nowMs };
}
