/** Budgets that end a run. Defaults follow DeepResearch. */
export interface RunLimits {
  /**
   * Model calls per run. Default 100.
   * @asType integer
   * @minimum 1
   * @maximum 10000
   */
  maxModelCalls: number;
  /**
   * Wall time per run in minutes, measured in workflow time. Default 150.
   * @exclusiveMinimum 0
   * @maximum 10080
   */
  maxDurationMinutes: number;
  /**
   * Context size in tokens past which the run asks for its final answer. Default 110,000.
   * @asType integer
   * @minimum 1
   * @maximum 10000000
   */
  maxContextTokens: number;
  /**
   * Longest tool output the model sees, in characters; the rest stays in the transcript store. Default 40,000.
   * @asType integer
   * @minimum 1
   * @maximum 10000000
   */
  maxObservationCharacters: number;
  /**
   * Prompt plus completion tokens over all model calls; 0 means no budget. Default 0.
   * @asType integer
   * @minimum 0
   */
  maxTotalTokens: number;
  /**
   * What the run's model calls may cost, in USD at the worker's prices (`REACT_AGENT_MODEL_PRICES`);
   * absent or 0 means no budget. Checked before each model call: the run goes to its final answer
   * (termination `cost_limit`) once what it spent, plus what its last call cost when the final
   * answer phase is on (the room kept for that last call), reaches it. A run with this budget whose
   * model call comes back without a cost (the worker has no price for the model) ends `error` after
   * that call, since the budget could never end it. Default none.
   * @minimum 0
   */
  maxCostUsd?: number;
}

export const DEFAULT_LIMITS: RunLimits = {
  maxModelCalls: 100,
  maxDurationMinutes: 150,
  maxContextTokens: 110_000,
  maxObservationCharacters: 40_000,
  maxTotalTokens: 0,
};

/** How the loop behaves. Defaults follow AgentScope's ReAct agent where it has one. */
export interface LoopOptions {
  /** When a budget runs out, make one last tool-less call asking for the best answer. Default true. */
  finalAnswerPhase: boolean;
  /**
   * Start-to-close timeout of that last call, in seconds. Default 120.
   * @minimum 1
   * @maximum 3600
   */
  finalAnswerTimeoutSeconds: number;
  /**
   * Tool calls of one turn run at most this many at a time. Default 4.
   * @asType integer
   * @minimum 1
   * @maximum 64
   */
  maxParallelToolCalls: number;
  /** Warn on repeated calls, then end `stuck`. Default true. */
  stuckDetection: boolean;
  /**
   * Compress the context when it passes this fraction of maxContextTokens; 0 turns compression off. Default 0.8.
   * @minimum 0
   * @maximum 1
   */
  compressAtFraction: number;
  /**
   * Turns kept whole when compressing. Default 3.
   * @asType integer
   * @minimum 1
   * @maximum 100
   */
  keepRecentTurns: number;
  /** Fold older turns into a model-written summary when stubbing observations is not enough. Default true. */
  summarizeOldTurns: boolean;
  /**
   * How long a tool call that requires approval waits for one, in minutes. Default 30.
   * @minimum 0.01
   * @maximum 10080
   */
  approvalTimeoutMinutes: number;
  /**
   * Attempts the model gets to produce an answer matching `answerSchema`. Default 3.
   * @asType integer
   * @minimum 1
   * @maximum 20
   */
  answerAttempts: number;
  /**
   * Continue-as-new after this many model calls in one run, besides when Temporal suggests it; 0 = only when suggested. Default 0.
   * @asType integer
   * @minimum 0
   * @maximum 10000
   */
  continueAsNewAfterModelCalls: number;
  /**
   * Truncated replies in a row (cut off at the output token limit, or an `<answer>` never closed)
   * that end the run: each one before gets an observation asking for a shorter reply; this many
   * end the run `token_limit` through the final answer phase. Counted since the last usable reply. Default 3.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  maxTruncatedReplies: number;
  /**
   * Malformed replies in a row (nothing the protocol could read: no answer, no parseable tool call)
   * that end the run: each one before gets the protocol's format correction; this many end the run
   * `error` through the final answer phase (the model does not follow this protocol). Counted since
   * the last usable reply. Default 5.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  maxMalformedReplies: number;
}

export const DEFAULT_LOOP_OPTIONS: LoopOptions = {
  finalAnswerPhase: true,
  finalAnswerTimeoutSeconds: 120,
  maxParallelToolCalls: 4,
  stuckDetection: true,
  compressAtFraction: 0.8,
  keepRecentTurns: 3,
  summarizeOldTurns: true,
  approvalTimeoutMinutes: 30,
  answerAttempts: 3,
  continueAsNewAfterModelCalls: 0,
  maxTruncatedReplies: 3,
  maxMalformedReplies: 5,
};
