import { maxDurationMs, elapsedMs, treeModelCalls } from '../run-budgets';
import type { RunLimits } from '../run-limits';
import type { RunState } from '../run-state';

/** Model calls a parent keeps for itself when it delegates: one to read the reports, one for the final answer. */
export const PARENT_KEEPS_MODEL_CALLS = 2;
/** The fewest model calls a sub-run is worth starting with: one to use a tool, one to answer. */
export const MIN_SUB_RUN_MODEL_CALLS = 2;
/** The share of what is left of time, tokens and cost that sub-runs may take; the parent keeps the rest. */
export const SUB_RUN_SHARE = 0.9;
/** The shortest time a sub-run is worth starting with. */
export const MIN_SUB_RUN_MS = 10_000;

/**
 * The limits of each of `tasks` sub-runs, carved from what the parent has left: model calls
 * (less {@link PARENT_KEEPS_MODEL_CALLS}) split between the tasks, each share less the sub-run's
 * final answer call when `finalAnswerPhase` (that call comes after a budget ends); time ({@link SUB_RUN_SHARE} of
 * what is left) split between the waves `maxParallel` at a time makes; total tokens and cost
 * ({@link SUB_RUN_SHARE} of what is left, the cost less the room kept for the final answer call)
 * split between the tasks. So the sub-runs together never exceed the parent's budgets. Context and
 * observation sizes are the parent's. The problem the model is told when too little is left.
 */
export function subRunLimits(
  state: RunState,
  tasks: number,
  maxParallel: number,
  now: number,
  finalAnswerPhase: boolean,
): { limits: RunLimits } | { problem: string } {
  const { limits } = state;
  const refuse = (what: string) => ({
    problem:
      `Error: delegate was not run: ${what} is left for ${tasks} sub-run${tasks === 1 ? '' : 's'}. ` +
      `Hand out fewer tasks, or research with your other tools and answer.`,
  });
  const callsLeft = limits.maxModelCalls - treeModelCalls(state) - PARENT_KEEPS_MODEL_CALLS;
  // A sub-run's final answer call comes after its budget: it is kept out of the share.
  const calls = Math.floor(callsLeft / tasks) - (finalAnswerPhase ? 1 : 0);
  if (calls < MIN_SUB_RUN_MODEL_CALLS) return refuse(`too few model calls (${Math.max(0, callsLeft)} to share)`);
  const waves = Math.ceil(tasks / Math.max(1, maxParallel));
  const msPerWave = ((maxDurationMs(state) - elapsedMs(state, now)) * SUB_RUN_SHARE) / waves;
  if (msPerWave < MIN_SUB_RUN_MS) return refuse('too little time');
  let maxTotalTokens = 0;
  if (limits.maxTotalTokens > 0) {
    maxTotalTokens = Math.floor(((limits.maxTotalTokens - state.usage.totalTokens) * SUB_RUN_SHARE) / tasks);
    if (maxTotalTokens < 1) return refuse('too few tokens');
  }
  let maxCostUsd: number | undefined;
  if (limits.maxCostUsd) {
    const costLeft = limits.maxCostUsd - (state.usage.costUsd ?? 0) - (state.lastCallCostUsd ?? 0);
    maxCostUsd = (costLeft * SUB_RUN_SHARE) / tasks;
    if (!(maxCostUsd > 0)) return refuse('too little of the cost budget');
  }
  return {
    limits: {
      maxModelCalls: calls,
      maxDurationMinutes: Math.floor(msPerWave) / 60_000,
      maxContextTokens: limits.maxContextTokens,
      maxObservationCharacters: limits.maxObservationCharacters,
      maxTotalTokens,
      ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    },
  };
}

/** The limits a parent shares again with its running sub-runs when its own change. */
export type SharedLimits = Partial<Pick<RunLimits, 'maxModelCalls' | 'maxTotalTokens' | 'maxCostUsd'>>;

/** The part of carved limits a parent sends its running sub-runs (signal `limitsFromParent`): calls, and tokens and cost when budgeted. */
export function sharedLimits(limits: RunLimits): SharedLimits {
  return {
    maxModelCalls: limits.maxModelCalls,
    ...(limits.maxTotalTokens > 0 ? { maxTotalTokens: limits.maxTotalTokens } : {}),
    ...(limits.maxCostUsd ? { maxCostUsd: limits.maxCostUsd } : {}),
  };
}

/**
 * A sub-run's limit changes from what its parent sent: only numbers in range are taken (the
 * signal could come from anyone), model calls never below those already made (the budget then
 * ends at the next check), total tokens at least 1 (0 would mean no budget).
 */
export function limitsFromParent(state: RunState, sent: SharedLimits | undefined): Partial<RunLimits> {
  const number = (value: unknown, max: number): number | undefined =>
    typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= max ? value : undefined;
  const calls = number(sent?.maxModelCalls, 10_000);
  const tokens = number(sent?.maxTotalTokens, Number.MAX_SAFE_INTEGER);
  const cost = number(sent?.maxCostUsd, Number.MAX_SAFE_INTEGER);
  return {
    ...(calls !== undefined ? { maxModelCalls: Math.max(Math.floor(calls), state.modelCalls) } : {}),
    ...(tokens !== undefined ? { maxTotalTokens: Math.max(1, Math.floor(tokens)) } : {}),
    ...(cost !== undefined ? { maxCostUsd: cost } : {}),
  };
}
