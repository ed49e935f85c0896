/**
 * Ids of the `patched()` markers that keep runs already in flight replaying on newer workflow
 * code. Each guards one change of what the loop does; a run recorded before the change replays
 * the old way, a run that reaches the change live takes the new way. Remove a patch (through
 * `deprecatePatch`) only once no run from before it can still be replayed.
 */
export const LoopPatches = {
  /**
   * Replies the loop cannot use (src/core/unusable-replies.ts): a truncated reply gets a request for a
   * shorter one instead of being accepted, a truncated final answer is asked for once more, an
   * unparseable call is left out of stuck detection, and each kind has its limit in a row.
   */
  unusableReplies: 'unusable-replies',
  /** Token estimates converted with the ratio the model server last reported (src/core/token-calibration.ts). */
  calibratedTokenEstimates: 'calibrated-token-estimates',
  /**
   * The model server's context window (issue 16, src/core/context-window.ts): learned at the start
   * by the `learnContextWindow` activity, or from a context-length error, it lowers the context budget.
   */
  contextWindow: 'context-window',
  /** The final answer call's prompt is compressed until it fits the context budget, or the call is not made (issue 16). */
  finalAnswerFits: 'final-answer-fits',
  /**
   * The run's tool list is stored by reference (issue 18): `startConversation` stores the specs
   * (descriptions, parameter schemas) as one content-addressed blob, and history keeps its
   * reference with each tool's name, activity settings and approval flag (`ToolSchedule`); model
   * calls send the schemas from the stored blob, so a worker whose MCP servers now list other tools
   * cannot change a run in flight, and a call of a tool no worker offers any more is answered with
   * `goneToolObservation`. Runs opened before keep the whole specs in history and the old answers.
   */
  toolSpecsByReference: 'tool-specs-by-reference',
  /**
   * The money budget (issue 19, `limits.maxCostUsd`, src/core/run-budgets.ts `costUsedUp`): the
   * loop ends `cost_limit` through the final answer phase once the run's cost reaches it (keeping
   * room for the final answer call), and a run with the budget whose model call came back without
   * a cost (no price on the worker) ends `error` after that call. Asked only when one of the two
   * happens, so runs without a cost budget (every run recorded before it) record no marker.
   */
  costBudget: 'cost-budget',
  /**
   * Answers checked against a client's answer schema within bounds (issue 28,
   * src/core/json-schema-validation.ts `checkAnswerValue`): patterns match in linear time (RE2),
   * and the answer's length, nesting and the check's work are bounded. Asked once, when a run with
   * an answer schema starts; runs started before replay their unbounded checks.
   */
  boundedAnswerChecks: 'bounded-answer-checks',
  /**
   * An approval (`approveToolCall`) completes only once the waiting call has taken it (issue 34):
   * its wait's timer cancelled and the call gone on. Before, the update's completion and that
   * cancellation were ordered by how many promise turns each took, which the tracing interceptors
   * change, so a run's history depended on whether they were bundled. Asked when an approval comes.
   */
  approvalsCompleteAfterTheirEffect: 'approvals-complete-after-their-effect',
  /**
   * Lighter bookkeeping (issue 34, workflows/light-bookkeeping.ts): `startConversation` runs as a
   * local activity and learns the context window too (no `learnContextWindow` activity; the
   * worker asks the model server once per model, then caches), `finishTranscript` runs only when
   * there is something to append (as a local activity), the search attributes go in one upsert at
   * the start and one at the end (and none after a model call whose reply ends the run), and it
   * implies the markers of the common path (`tool-specs-by-reference`, `context-window`,
   * `calibrated-token-estimates`, `unusable-replies`, `final-answer-fits`, `run-search-attributes`),
   * which such a run no longer records: each marker is two events and a visibility write. Asked
   * when the transcript opens; a run opened before asks it at its next step and goes on lighter.
   */
  lightBookkeeping: 'light-bookkeeping',
  /**
   * Model and tool calls carry only what their activities cannot learn for themselves (issue 34):
   * no workflow id (the activity's context has it), no tool names when the stored specs' reference
   * is sent (they are the run's tools, in its order), no observation limit when it is the default.
   * A 100-call run's history is about a tenth smaller. It implies `light-bookkeeping` (and all that
   * implies), so a run opened now records this one marker; a run recorded with `light-bookkeeping`
   * alone replays the calls it sent, and goes on lean at its next step when it runs live again.
   */
  leanActivityInputs: 'lean-activity-inputs',
} as const;

/** Markers of the `modelLimiter` workflow (issue 33). */
export const ModelLimiterPatches = {
  /**
   * A reservation (`reserveModelLimit`) completes only once the limiter's loop has taken it (its
   * idle timer cancelled and started again), not in an order decided by promise turns, which the
   * tracing interceptors change (issue 34). Asked when a reservation comes.
   */
  reservationsCompleteAfterTheirEffect: 'reservations-complete-after-their-effect',
} as const;

/** Markers of the `researchBatch` workflow. */
export const BatchPatches = {
  /** A batch with `evaluate` starts an `evaluation` child when it ends (issue 12). */
  evaluateAtEnd: 'batch-evaluate-at-end',
} as const;

/** Markers of what runs show in visibility (the Web UI's list, `react-agent list`). */
export const VisibilityPatches = {
  /**
   * `ReactQuestion`, `ReactProtocol`, `ReactModel` and `ReactTokens` set by the run (issue 22,
   * workflows/run-search-attributes.ts): when the transcript opens, every tenth model call, before
   * continuing as new and when the run ends. `ReactCost` (issue 19) rides along once the run's
   * usage has a cost, which no run recorded before prices existed has.
   */
  runSearchAttributes: 'run-search-attributes',
} as const;

/** Markers of the workflows' input checks. */
export const InputPatches = {
  /**
   * Inputs of researchAgent, researchBatch and evaluation checked against the contract's JSON
   * Schemas (schemas/, issue 16): unknown fields, wrong types and model options out of range are
   * refused. A workflow started before this change whose input had such a field replays without
   * the refusal (the marker is asked for only when there are problems). Since issue 28 the same
   * marker guards the refusal of `resume` from anyone but the run's own continue-as-new (a run
   * continued before `resumedFrom` existed replays as it ran), of limits a continued run carries
   * beyond the schema's bounds, and of an input whose `__proto__` key became its prototype.
   */
  contractSchema: 'input-contract-schema',
} as const;
