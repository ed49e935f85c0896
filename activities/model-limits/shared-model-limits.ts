import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import {
  DEFAULT_RESERVED_OUTPUT_TOKENS,
  modelLimiterWorkflowId,
  modelLimitFor,
  type ModelLimit,
  type ModelLimitGrant,
  type ModelLimitReason,
  type ModelLimits,
} from '../../src/core/model-limits/model-limit';
import {
  pauseModelLimitSignal,
  reserveModelLimitUpdate,
  settleModelLimitSignal,
  type ModelLimiterInput,
} from '../../src/core/model-limits/limiter-messages';
import { WorkflowTypes } from '../../src/core/workflow-types';

/** What a call asks the shared limit for. */
export interface ModelLimitAsk {
  model: string;
  /** The prompt's tokens as counted before the call. */
  promptTokens: number;
  /** The run's max output tokens, reserved for the reply (else the limit's `reservedOutputTokens`, else 1 000). */
  maxOutputTokens?: number;
  /** The run's share of the limit (`--model-share`); absent: the whole limit. */
  share?: number;
}

/** A call's place in the shared budget: when it may start, and how to settle it. */
export interface ModelLimitTicket {
  model: string;
  limit: ModelLimit;
  leaseId: string;
  /** Tokens reserved. */
  tokens: number;
  /** The prompt's tokens as counted here (before calibration). */
  countedPromptTokens: number;
  /** Milliseconds the limiter asked the call to wait (0: none). */
  waitMs: number;
  reason?: ModelLimitReason;
  /** Milliseconds from asking to the limiter's answer (the limiter's cost per call). */
  askedMs: number;
}

/** The seam between the model activity and the limiters (a fake in unit tests). */
export interface ModelLimitGate {
  /** Books a call of `ask.model`; undefined when the model has no limit (nothing is asked). */
  reserve(ask: ModelLimitAsk): Promise<ModelLimitTicket | undefined>;
  /**
   * The call's real usage (prompt + completion tokens as the provider reported them); with the
   * provider's prompt tokens, what its count says of ours (later reservations are scaled by it).
   */
  settle(ticket: ModelLimitTicket, tokens: number, reportedPromptTokens?: number): Promise<void>;
  /** A provider's 429 with retry-after: every worker's calls of `model` wait that long, once. */
  pause(model: string, retryAfterMs: number): Promise<void>;
}

/** What the provider's prompt count is taken to be of ours before any call of the model settled (a cautious guess). */
const INITIAL_PROMPT_RATIO = 1.2;

/** Reservations cover the calibrated prompt count plus this much (counts vary call to call). */
const PROMPT_MARGIN = 1.05;

/** Attempts of one reservation RPC before the call fails (and Temporal retries it). */
const RESERVE_ATTEMPTS = 4;

/**
 * The model limits of `REACT_AGENT_MODEL_LIMITS` kept by one `modelLimiter` workflow per model
 * (workflows/model-limiter.ts), on `taskQueue` (the workflows' queue), reached through the
 * activity's Temporal client: one update-with-start per call (the first call starts the limiter),
 * one signal to settle it.
 */
export class SharedModelLimits implements ModelLimitGate {
  /**
   * Per model, the provider's prompt tokens over ours (at least 1, at most 3), from the calls
   * settled so far: a provider that counts more than tiktoken does gets reservations that cover it.
   * Reserving more than a call uses costs little: the rest is given back when it settles, to the
   * calls booked after it.
   */
  private readonly promptRatios = new Map<string, number>();

  constructor(
    private readonly limits: ModelLimits,
    private readonly taskQueue: string,
    private readonly client: () => Client,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async reserve(ask: ModelLimitAsk): Promise<ModelLimitTicket | undefined> {
    const limit = modelLimitFor(this.limits, ask.model);
    if (!limit) return undefined;
    const countedPromptTokens = Math.max(0, Math.ceil(ask.promptTokens));
    const tokens =
      Math.ceil(countedPromptTokens * (this.promptRatios.get(ask.model) ?? INITIAL_PROMPT_RATIO) * PROMPT_MARGIN) +
      (ask.maxOutputTokens ?? limit.reservedOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS);
    const request = { limit, tokens, ...(ask.share !== undefined && ask.share < 1 ? { share: ask.share } : {}) };
    const started = this.now();
    let grant: ModelLimitGrant | undefined;
    for (let attempt = 1; grant === undefined; attempt += 1) {
      try {
        grant = await this.client().workflow.executeUpdateWithStart(reserveModelLimitUpdate, {
          args: [request],
          startWorkflowOperation: new WithStartWorkflowOperation(WorkflowTypes.modelLimiter, {
            workflowId: modelLimiterWorkflowId(ask.model),
            taskQueue: this.taskQueue,
            args: [{ model: ask.model } satisfies ModelLimiterInput],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        });
      } catch (error) {
        // The limiter may be ending (idle) or continuing as new just then: ask again.
        if (attempt >= RESERVE_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    return {
      model: ask.model,
      limit,
      leaseId: grant.leaseId,
      tokens,
      countedPromptTokens,
      waitMs: grant.waitMs,
      ...(grant.reason ? { reason: grant.reason } : {}),
      askedMs: this.now() - started,
    };
  }

  async settle(ticket: ModelLimitTicket, tokens: number, reportedPromptTokens?: number): Promise<void> {
    if (reportedPromptTokens !== undefined && reportedPromptTokens > 0 && ticket.countedPromptTokens > 0) {
      const ratio = Math.min(3, Math.max(1, reportedPromptTokens / ticket.countedPromptTokens));
      const before = this.promptRatios.get(ticket.model);
      // A moving average: a reservation above the real usage holds back the calls booked behind it.
      this.promptRatios.set(ticket.model, before === undefined ? ratio : 0.8 * before + 0.2 * ratio);
    }
    await this.client()
      .workflow.getHandle(modelLimiterWorkflowId(ticket.model))
      .signal(settleModelLimitSignal, { leaseId: ticket.leaseId, tokens: Math.max(0, Math.round(tokens)) });
  }

  async pause(model: string, retryAfterMs: number): Promise<void> {
    if (!modelLimitFor(this.limits, model)) return;
    await this.client()
      .workflow.getHandle(modelLimiterWorkflowId(model))
      .signal(pauseModelLimitSignal, { retryAfterMs: Math.max(0, Math.round(retryAfterMs)) });
  }
}
