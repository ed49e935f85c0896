import type { RunProgress } from './message-definitions';
import type { ResearchPhase } from './research-phase';
import { contextBudget, elapsedMs, nextContextTokens, remainingBudgets } from './run-budgets';
import type { RunState } from './run-state';
import type { Termination } from './termination';
import { openCallsPreview, type Turn } from './turns';

/** What a run knows beside its state, for {@link runProgress}. */
export interface ProgressFacts {
  phase: ResearchPhase;
  /** The turn whose tool calls are running, if any. */
  turn?: Turn;
  /** The calls waiting for approval, by call id. */
  awaitingApproval: ReadonlyMap<string, { tool: string; arguments: string }>;
  /** Set once the run concluded. */
  termination?: Termination;
  /** The ids of its sub-runs running now (issue 30). */
  runningSubRuns?: readonly string[];
}

/** What the `progress` query answers at `now`: the run's budgets spent and left, its open and waiting calls, its phase. */
export function runProgress(state: RunState, facts: ProgressFacts, now: number): RunProgress {
  return {
    phase: facts.phase,
    modelCalls: state.modelCalls,
    contextTokens: nextContextTokens(state),
    totalTokens: state.usage.totalTokens,
    ...(state.usage.costUsd !== undefined ? { costUsd: state.usage.costUsd } : {}),
    elapsedMs: elapsedMs(state, now),
    limits: state.limits,
    contextBudget: contextBudget(state),
    ...(state.details.contextWindow ? { contextWindow: state.details.contextWindow } : {}),
    remaining: remainingBudgets(state, now),
    lastThought: state.lastThought,
    openToolCalls: openCallsPreview(facts.turn),
    awaitingApproval: [...facts.awaitingApproval.entries()].map(([callId, call]) => ({
      callId,
      tool: call.tool,
      arguments: call.arguments,
    })),
    toolCalls: state.toolCallsAnswered,
    continuedAsNew: state.details.continuedAsNew,
    termination: facts.termination,
    ...(state.subRuns || facts.runningSubRuns?.length
      ? {
          subRuns: {
            running: [...(facts.runningSubRuns ?? [])],
            modelCalls: state.subRuns?.modelCalls ?? 0,
            ended: state.subRuns?.runs ?? [],
          },
        }
      : {}),
  };
}
