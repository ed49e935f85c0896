/**
 * Keeps a streamed model call alive while it is healthy and gives up on it when it is not.
 *
 * While the HTTP request is open it heartbeats every few seconds, so Temporal does not take a
 * long silent stretch for a dead worker: a server reading a long prompt sends no chunk at all
 * (llama-server sends SSE comment pings, which the openai client does not surface) until it has
 * generated the first token. Two limits end the request instead:
 *
 * - no first chunk within `firstTokenLimitMs` ("first-token"), and
 * - once chunks flow, a gap longer than `stallLimitMs` between two of them ("stall":
 *   REACT_AGENT_MODEL_STALL_SECONDS for a model call, the heartbeat timeout for the judge and
 *   compression). The heartbeats go on meanwhile, so the stall limit may exceed the heartbeat timeout.
 */

import { heartbeatIntervalFor, keepHeartbeating } from '../heartbeats';

/** Why the watchdog gave up on a request. */
export type AbandonReason = 'first-token' | 'stall';

export interface ModelStreamWatchdogOptions {
  /** Longest wait for the first chunk, in milliseconds (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS). */
  firstTokenLimitMs: number;
  /** Longest gap between two chunks once the reply streams, in milliseconds. */
  stallLimitMs: number;
  /** Time between heartbeats while the request is open; default {@link heartbeatIntervalFor}(`stallLimitMs`). */
  heartbeatIntervalMs?: number;
  /** Sends one heartbeat; called every `heartbeatIntervalMs` until {@link ModelStreamWatchdog.stop}. */
  heartbeat: () => void;
  /** Called once when a limit passes; it should abort the request. */
  abandon: (reason: AbandonReason) => void;
}

/** Watches one model request from the moment it is sent until {@link stop}. */
export class ModelStreamWatchdog {
  private readonly startedAt = Date.now();
  private firstChunkAt: number | undefined;
  private limitTimer: NodeJS.Timeout | undefined;
  private readonly stopHeartbeats: () => void;
  private abandonReason: AbandonReason | undefined;

  constructor(private readonly options: ModelStreamWatchdogOptions) {
    this.stopHeartbeats = keepHeartbeating(
      options.heartbeat,
      options.heartbeatIntervalMs ?? heartbeatIntervalFor(options.stallLimitMs),
    );
    this.arm('first-token', options.firstTokenLimitMs);
  }

  /** Call for every chunk that arrives: the first ends the wait for it, each one restarts the stall limit. */
  chunkArrived(): void {
    if (this.abandonReason) return;
    this.firstChunkAt ??= Date.now();
    this.arm('stall', this.options.stallLimitMs);
  }

  /** Stops heartbeating and watching; call when the request ended, however it ended. */
  stop(): void {
    clearTimeout(this.limitTimer);
    this.stopHeartbeats();
  }

  /** Why the request was given up on, if it was. */
  get abandoned(): AbandonReason | undefined {
    return this.abandonReason;
  }

  /** Milliseconds from sending the request to its first chunk, or to now while none came. */
  get waitForFirstChunkMs(): number {
    return (this.firstChunkAt ?? Date.now()) - this.startedAt;
  }

  private arm(reason: AbandonReason, limitMs: number): void {
    clearTimeout(this.limitTimer);
    this.limitTimer = setTimeout(() => {
      this.abandonReason = reason;
      this.stop();
      this.options.abandon(reason);
    }, limitMs);
  }
}
