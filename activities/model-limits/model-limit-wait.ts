import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { AgentMetrics } from '../../src/core/agent-metrics';
import { FailureTypes } from '../../src/core/failure-types';
import type { ModelCallHeartbeat } from '../../src/domain/model-stream-text';
import type { ModelLimitAsk, ModelLimitGate, ModelLimitTicket } from './shared-model-limits';

/** How often a waiting call heartbeats (and notices cancellation). */
const WAIT_STEP_MS = 1_000;

/**
 * Takes a model call's place in its model's shared limit and waits for it, heartbeating
 * `waitingForModelLimit` meanwhile (`react-agent follow` and `status` print it) and recording the
 * wait (`react_agent_model_limit_wait_seconds`). A wait longer than the attempt has time for gives
 * its tokens back and fails the attempt as rate limited, retried by Temporal when the budget is there.
 * Undefined when the model has no limit.
 */
export async function waitForModelLimit(
  gate: ModelLimitGate | undefined,
  ask: ModelLimitAsk,
  context: Context,
): Promise<ModelLimitTicket | undefined> {
  if (!gate) return undefined;
  // The limiter's answer takes one RPC (more when it starts or continues as new): heartbeat meanwhile.
  const asking = setInterval(() => context.heartbeat({ chunks: 0, characters: 0 }), WAIT_STEP_MS);
  const ticket = await gate.reserve(ask).finally(() => clearInterval(asking));
  if (!ticket) return undefined;
  const wait = AgentMetrics.modelLimitWaitSeconds;
  context.metricMeter.createHistogram(wait.name, 'float', wait.unit, wait.description).record(ticket.waitMs / 1000, {
    model: ask.model,
    limit: ticket.waitMs > 0 ? (ticket.reason ?? 'tokens') : 'none',
  });
  if (ticket.waitMs <= 0) return ticket;

  const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = context.info;
  const left = startToCloseTimeoutMs - (Date.now() - currentAttemptScheduledTimestampMs);
  if (ticket.waitMs > left - Math.min(60_000, left / 2)) {
    await gate.settle(ticket, 0).catch(() => undefined);
    throw ApplicationFailure.create({
      type: FailureTypes.modelRateLimited,
      message: `The model ${ask.model} is at its shared limit for ${Math.round(ticket.waitMs / 1000)} s, longer than this attempt may wait; retrying then.`,
      nextRetryDelay: ticket.waitMs,
    });
  }
  const until = Date.now() + ticket.waitMs;
  for (let remaining = ticket.waitMs; remaining > 0; remaining = until - Date.now()) {
    const details: ModelCallHeartbeat = {
      chunks: 0,
      characters: 0,
      waitingForModelLimit: {
        seconds: Math.ceil(remaining / 1000),
        model: ask.model,
        limit: ticket.reason ?? 'tokens',
      },
    };
    context.heartbeat(details);
    // Throws CancelledFailure when the run is cancelled: the reservation then lapses with its lease.
    await context.sleep(Math.min(WAIT_STEP_MS, remaining));
  }
  return ticket;
}

/**
 * After a call that answered: its reservation settled with the tokens it used (prompt +
 * completion), and the provider's prompt count, when it reported usage; else what was booked (the
 * provider counted something). Best effort: a limiter out of reach must not fail a call that ran.
 */
export async function settleAnsweredCall(
  gate: ModelLimitGate | undefined,
  ticket: ModelLimitTicket | undefined,
  usage: { promptTokens: number; completionTokens: number } | undefined,
): Promise<void> {
  if (!gate || !ticket) return;
  const used = usage ? usage.promptTokens + usage.completionTokens : ticket.tokens;
  await gate.settle(ticket, used, usage?.promptTokens).catch(() => undefined);
}

/**
 * After a failed call: a 429 with retry-after pauses every worker's calls of the model (once,
 * however many calls saw it); the reservation is settled as used (the provider may have counted it).
 */
export async function settleFailedCall(
  gate: ModelLimitGate | undefined,
  ticket: ModelLimitTicket | undefined,
  error: unknown,
  model: string,
  context: Context,
): Promise<void> {
  if (!gate) return;
  const rateLimited = error instanceof ApplicationFailure && error.type === FailureTypes.modelRateLimited;
  const delay = rateLimited ? error.nextRetryDelay : undefined;
  const retryAfterMs = delay === undefined || delay === null ? undefined : msToNumber(delay);
  const reports: Array<Promise<void>> = [];
  if (retryAfterMs !== undefined && ticket) {
    const pauses = AgentMetrics.modelLimitPauses;
    context.metricMeter.createCounter(pauses.name, pauses.unit, pauses.description).add(1, { model });
    reports.push(gate.pause(model, retryAfterMs));
  }
  if (ticket) reports.push(gate.settle(ticket, ticket.tokens));
  // Best effort: a limiter out of reach must not hide the call's own failure.
  await Promise.allSettled(reports);
}
