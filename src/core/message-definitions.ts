import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SubRunRecord } from './sub-runs/sub-run-record';
import type { ResearchPhase } from './research-phase';
import type { RunLimits } from './run-limits';
import type { ApprovalDecision, LimitChanges } from './run-steering';
import type { Termination } from './termination';

export type { ApprovalDecision, LimitChanges } from './run-steering';

/** A live view of a run, answered by the `progress` query. */
export interface RunProgress {
  /** What the run is doing now (src/core/research-phase.ts). */
  phase: ResearchPhase;
  modelCalls: number;
  contextTokens: number;
  totalTokens: number;
  /** What the model calls cost so far in USD (`usage.costUsd`); absent when no call's model has a price. */
  costUsd?: number;
  elapsedMs: number;
  limits: RunLimits;
  /** The context budget in force: `limits.maxContextTokens`, or less when the model's context window is known. */
  contextBudget: number;
  /** The model server's context window, when the run learned it, and what a prompt may take of it. */
  contextWindow?: { tokens: number; source: string; promptBudget: number };
  /** What is left of each budget (`totalTokens` and `costUsd` only when the run has that budget). */
  remaining: { modelCalls: number; durationMs: number; contextTokens: number; totalTokens?: number; costUsd?: number };
  /** The model's last reasoning, shortened. */
  lastThought: string;
  /** Tool calls of the current turn not yet answered, as `name(arguments preview)`. */
  openToolCalls: string[];
  /** Tool calls waiting for approval (`react-agent approve <run> <callId>`). */
  awaitingApproval: Array<{ callId: string; tool: string; arguments: string }>;
  /** Tool calls answered so far. */
  toolCalls: number;
  /** Runs this workflow continued as new. */
  continuedAsNew: number;
  termination?: Termination;
  /**
   * A run with sub-runs (issue 30): the ids of those running now (each answers `progress` itself,
   * with its own limits), and the model calls and record of those that ended. Absent for runs
   * that have not delegated.
   */
  subRuns?: { running: string[]; modelCalls: number; ended: SubRunRecord[] };
}

/** Argument of the `injectMessage` update. */
export interface InjectMessageRequest {
  /**
   * The user message added before the next model call (not blank; at most 20,000 characters).
   * @minLength 1
   * @maxLength 20000
   */
  text: string;
}

/** Result of the `injectMessage` update. */
export interface InjectMessageResult {
  /** The model call the message will precede. */
  modelCall: number;
}

/** Argument of the `finishNow` update. */
export interface FinishNowRequest {
  /** Why, for the record. */
  reason?: string;
}

/** Result of the `finishNow` update. */
export interface FinishNowResult {
  /** Model calls made when the request was accepted. */
  modelCalls: number;
}

/** Result of the `approveToolCall` update. */
export interface ApproveToolCallResult {
  callId: string;
  approved: boolean;
}

// Defined once here so the workflow and every client agree on names and types.
export const progressQuery = defineQuery<RunProgress>('progress');
/** Adds a user message before the next model call. Returns the model call it will precede. */
export const injectMessageUpdate = defineUpdate<InjectMessageResult, [InjectMessageRequest]>('injectMessage');
/** Goes to the final answer phase now. */
export const finishNowUpdate = defineUpdate<FinishNowResult, [FinishNowRequest]>('finishNow');
/** Raises or lowers budgets; returns the limits in force afterwards. */
export const setLimitsUpdate = defineUpdate<RunLimits, [LimitChanges]>('setLimits');
/** Approves or denies a tool call that requires approval. */
export const approveToolCallUpdate = defineUpdate<ApproveToolCallResult, [ApprovalDecision]>('approveToolCall');
/**
 * Sent by a parent run to its running sub-runs (issue 30) when it is asked to finish (or its time
 * is up): each goes to its final answer phase, as with `finishNow`, and reports what it has.
 */
export const finishFromParentSignal = defineSignal<[FinishNowRequest]>('finishFromParent');
/**
 * Sent by a parent run to its running sub-runs (issue 30) when its limits were changed
 * (`setLimits`): each sub-run's share carved again from what the parent has now; the sub-run takes
 * them through `limitsFromParent` (src/core/sub-runs/sub-run-budget.ts).
 */
export const limitsFromParentSignal =
  defineSignal<[Partial<Pick<RunLimits, 'maxModelCalls' | 'maxTotalTokens' | 'maxCostUsd'>>]>('limitsFromParent');
