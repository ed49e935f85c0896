/**
 * A model's shared limit (issue 33): the provider's tokens and requests per minute for one model,
 * one budget for every worker of a namespace, kept by the `modelLimiter` workflow
 * (workflows/model-limiter.ts) and asked for by the model activity before each call.
 */

/** The limits of one model as `REACT_AGENT_MODEL_LIMITS` gives them (src/config/model-limits-config.ts). */
export interface ModelLimit {
  /** Tokens (prompt + completion) the provider allows per minute; absent: tokens are not limited. */
  tokensPerMinute?: number;
  /** Requests the provider allows per minute; absent: requests are not limited. */
  requestsPerMinute?: number;
  /**
   * Output tokens reserved for a call before its usage is known, when the run does not set its max
   * output tokens; given back (or charged) when the call settles. Default {@link DEFAULT_RESERVED_OUTPUT_TOKENS}.
   */
  reservedOutputTokens?: number;
  /**
   * Seconds after its start time a reservation that was never settled (its worker died) is
   * forgotten by the limiter. Default {@link DEFAULT_LEASE_SECONDS}.
   */
  leaseSeconds?: number;
}

/** Output tokens reserved for a call whose run sets no max output tokens (and no `reservedOutputTokens`). */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 1_000;

/** A reservation not settled this long after its start time is forgotten (its tokens stay spent). */
export const DEFAULT_LEASE_SECONDS = 600;

/** The largest number of tokens one reservation may ask for (bounds a hostile or broken caller). */
export const MAX_RESERVATION_TOKENS = 100_000_000;

/** The workflow id of a model's limiter: one per model name in a namespace. */
export function modelLimiterWorkflowId(model: string): string {
  return `model-limit/${model}`;
}

/** What the model activity asks the limiter for before a call (the `reserveModelLimit` update). */
export interface ModelLimitReservationRequest {
  /** The model's limits as the asking worker is configured: the latest asked with wins. */
  limit: ModelLimit;
  /** Tokens to reserve: the prompt as counted plus the output reserved. */
  tokens: number;
  /**
   * The share of each limit the caller's runs may use at most (a batch's `--model-share`), in
   * (0, 1]; absent: the whole limit (interactive runs).
   */
  share?: number;
}

/** Which limit made a reservation wait. */
export type ModelLimitReason = 'tokens' | 'requests' | 'share' | 'pause';

/** The limiter's answer: the call may start after `waitMs`; settle `leaseId` after it. */
export interface ModelLimitGrant {
  leaseId: string;
  /** Milliseconds from the limiter's now until the call may start (0: at once). */
  waitMs: number;
  /** Which limit the wait is for (absent when there is none). */
  reason?: ModelLimitReason;
}

/** The real usage of a granted call (the `settleModelLimit` signal). */
export interface ModelLimitSettlement {
  leaseId: string;
  /** Tokens the call used as the provider reported them (prompt + completion). */
  tokens: number;
}

/** A provider's 429 with a retry-after (the `pauseModelLimit` signal): nothing starts before its end. */
export interface ModelLimitPause {
  retryAfterMs: number;
}

/** Limits by model name (`REACT_AGENT_MODEL_LIMITS`); `*` applies to every model not named. */
export type ModelLimits = Readonly<Record<string, ModelLimit>>;

/** The limit of `model`: its own, else `*`'s, else none. */
export function modelLimitFor(limits: ModelLimits, model: string): ModelLimit | undefined {
  return Object.hasOwn(limits, model) ? limits[model] : Object.hasOwn(limits, '*') ? limits['*'] : undefined;
}
