import type { LoopOptions } from './run-limits';
import type { RunState } from './run-state';
import type { BudgetEnd } from './termination';
import { inEstimatedTokens, inServerTokens, UNCALIBRATED } from './token-calibration';

/**
 * The budget checks of a run as small named predicates over its state, and the numbers the
 * `progress` query reports. `now` is workflow time. Pure and workflow-safe.
 */

export const elapsedMs = (state: RunState, now: number): number => now - state.startedAt;

export const maxDurationMs = (state: RunState): number => Math.round(state.limits.maxDurationMinutes * 60_000);

/** Server tokens per token of our estimate, as last reported (src/core/token-calibration.ts). */
export const calibration = (state: RunState): number => state.serverTokensPerEstimatedToken ?? UNCALIBRATED;

/** The context the next model call will send, in the server's tokens. */
export const nextContextTokens = (state: RunState): number =>
  state.contextTokens + inServerTokens(state.pendingTokens, calibration(state));

export const timeIsUp = (state: RunState, now: number): boolean => elapsedMs(state, now) >= maxDurationMs(state);

/** Model calls the run's budget has paid for: its own and its sub-runs' (issue 30). */
export const treeModelCalls = (state: RunState): number => state.modelCalls + (state.subRuns?.modelCalls ?? 0);

export const modelCallsUsedUp = (state: RunState): boolean => treeModelCalls(state) >= state.limits.maxModelCalls;

/** The optional total-token budget (0 = none) is used up. */
export const totalTokensUsedUp = (state: RunState): boolean =>
  state.limits.maxTotalTokens > 0 && state.usage.totalTokens >= state.limits.maxTotalTokens;

/**
 * The optional cost budget (`limits.maxCostUsd`; absent or 0 = none) is used up: what the run spent
 * reached it, or would with one more call like the last when `keepRoomForFinalAnswer` (the final
 * answer phase is on: the final answer call is that call, so the run ends near its budget, not a
 * whole call past it). A run with no cost yet (no priced call) has not used it up.
 */
export function costUsedUp(state: RunState, keepRoomForFinalAnswer: boolean): boolean {
  const budget = state.limits.maxCostUsd;
  const spent = state.usage.costUsd;
  if (!budget || spent === undefined) return false;
  return spent + (keepRoomForFinalAnswer ? (state.lastCallCostUsd ?? 0) : 0) >= budget;
}

/**
 * A run with a cost budget made a model call that came back without a cost: the worker has no
 * price for the model, so the budget could never end the run.
 */
export const costBudgetWithoutPrice = (state: RunState): boolean =>
  Boolean(state.limits.maxCostUsd) && state.modelCalls > 0 && state.usage.costUsd === undefined;

/**
 * The run's context budget: `limits.maxContextTokens`, or less when the model server's context
 * window is known (src/core/context-window.ts): what a prompt may take of it.
 */
export const contextBudget = (state: RunState): number =>
  Math.min(state.limits.maxContextTokens, state.details.contextWindow?.promptBudget ?? Number.POSITIVE_INFINITY);

/** The next call would send more context than the budget allows. */
export const contextOverLimit = (state: RunState): boolean => nextContextTokens(state) > contextBudget(state);

/** The context passed the compression threshold (`loop.compressAtFraction` of the budget; 0 = never). */
export const compressionDue = (state: RunState, options: LoopOptions): boolean =>
  options.compressAtFraction > 0 && nextContextTokens(state) > options.compressAtFraction * contextBudget(state);

/** What compression aims for, in our estimate's units: three quarters of the threshold. */
export const compressionTarget = (state: RunState, options: LoopOptions): number =>
  inEstimatedTokens(Math.floor(options.compressAtFraction * contextBudget(state) * 0.75), calibration(state));

/** Time to continue as new: this run made a call, and Temporal suggests it or `loop.continueAsNewAfterModelCalls` calls were made. */
export const continueAsNewDue = (state: RunState, options: LoopOptions, suggested: boolean): boolean =>
  state.modelCallsThisRun > 0 &&
  (suggested ||
    (options.continueAsNewAfterModelCalls > 0 && state.modelCallsThisRun >= options.continueAsNewAfterModelCalls));

/**
 * Whether the cost budget is what ends the loop before its next model call: no budget checked
 * before it is used up, and the cost is ({@link costUsedUp}). Only then does the `cost-budget`
 * marker decide {@link budgetEndBeforeModelCall}, so runs without a cost budget record no marker.
 */
export function costBudgetEndsLoop(state: RunState, now: number, finalAnswerPhase: boolean): boolean {
  return (
    !timeIsUp(state, now) &&
    !modelCallsUsedUp(state) &&
    !totalTokensUsedUp(state) &&
    costUsedUp(state, finalAnswerPhase)
  );
}

/**
 * The budget that ends the loop before its next model call, checked in this order: time, model
 * calls, total tokens, cost ({@link costUsedUp}, keeping room for the final answer call when
 * `finalAnswerPhase`) when `costBudget` (the `cost-budget` marker, read only when
 * {@link costBudgetEndsLoop}).
 */
export function budgetEndBeforeModelCall(
  state: RunState,
  now: number,
  cost: { finalAnswerPhase: boolean; costBudget: boolean } = { finalAnswerPhase: true, costBudget: true },
): BudgetEnd | undefined {
  if (timeIsUp(state, now)) return 'timeout';
  if (modelCallsUsedUp(state)) return 'max_calls';
  if (totalTokensUsedUp(state)) return 'token_limit';
  if (cost.costBudget && costUsedUp(state, cost.finalAnswerPhase)) return 'cost_limit';
  return undefined;
}

/** How long until the time budget runs out (at least 1 ms, so the deadline timer always fires). */
export const msUntilDeadline = (state: RunState, now: number): number =>
  Math.max(1, maxDurationMs(state) - elapsedMs(state, now));

/** What is left of each budget. */
export function remainingBudgets(
  state: RunState,
  now: number,
): { modelCalls: number; durationMs: number; contextTokens: number; totalTokens?: number; costUsd?: number } {
  return {
    modelCalls: Math.max(0, state.limits.maxModelCalls - treeModelCalls(state)),
    durationMs: Math.max(0, maxDurationMs(state) - elapsedMs(state, now)),
    contextTokens: Math.max(0, contextBudget(state) - nextContextTokens(state)),
    ...(state.limits.maxTotalTokens
      ? { totalTokens: Math.max(0, state.limits.maxTotalTokens - state.usage.totalTokens) }
      : {}),
    ...(state.limits.maxCostUsd ? { costUsd: Math.max(0, state.limits.maxCostUsd - (state.usage.costUsd ?? 0)) } : {}),
  };
}
