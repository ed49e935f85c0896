import type { CallModelOutput, CompressContextOutput, StartConversationOutput } from './activity-contracts';
import { closingReason, finalAnswerReason } from './ending-texts';
import { addUsage, ZERO_USAGE } from './messages';
import { appendPending, appendPendingText, clearPending, deliverInjectedMessages, setPending } from './pending';
import type { Protocol, ProtocolName, ToolCallRequest } from './protocols';
import { calibration, contextBudget } from './run-budgets';
import type { RunLimits } from './run-limits';
import type { RunDetails } from './run-result';
import type { RunState } from './run-state';
import { callSignature, INITIAL_STUCK_DETECTOR_STATE, observeToolCall, watchedCalls } from './stuck-detection';
import { terminationOfBudgetEnd, type BudgetEnd, type Termination } from './termination';
import { calibrationAfterCall, inServerTokens, UNCALIBRATED } from './token-calibration';
import { answerTurn, type Turn } from './turns';
import { NO_UNUSABLE_REPLIES } from './unusable-replies';

/**
 * Every change of a run's state, as pure functions from one `RunState` to the next (the reply
 * steps are in src/core/reply-steps.ts, pending messages in src/core/pending.ts). The workflow calls them
 * in its phases; unit tests call them without a server. Where a `patched()` marker decides, a
 * function takes its answer as a plain flag, and a predicate beside it says when the workflow must
 * ask the marker (only then, so its marker commands come exactly where they came before); the flag
 * is not read otherwise.
 */

export function initialRunState(protocol: ProtocolName, limits: RunLimits, startedAt: number): RunState {
  return {
    startedAt,
    limits,
    conversation: '',
    pending: [],
    pendingTokens: 0,
    pendingCallIds: [],
    modelCalls: 0,
    modelCallsThisRun: 0,
    toolCallsAnswered: 0,
    usage: ZERO_USAGE,
    contextTokens: 0,
    lastThought: '',
    stuck: INITIAL_STUCK_DETECTOR_STATE,
    unusableReplies: NO_UNUSABLE_REPLIES,
    serverTokensPerEstimatedToken: UNCALIBRATED,
    answerAttempts: 0,
    details: {
      protocol,
      compressions: [],
      stuckNudges: 0,
      continuedAsNew: 0,
      truncatedReplies: 0,
      malformedReplies: 0,
    },
  };
}

/** The state a continued run starts from: the carried one, with no calls made in this run yet. */
export function resumedRunState(resume: RunState): RunState {
  return { ...resume, modelCallsThisRun: 0 };
}

export function withDetails(state: RunState, details: Partial<RunDetails>): RunState {
  return { ...state, details: { ...state.details, ...details } };
}

/** The transcript was opened: what the run learned, its conversation and the context's size. */
export function openedRunState(state: RunState, started: StartConversationOutput): RunState {
  return {
    ...state,
    setup: {
      tools: started.tools,
      ...(started.toolSpecs ? { toolSpecs: started.toolSpecs } : {}),
      modelActivity: started.modelActivity,
      model: started.model,
    },
    conversation: started.conversation,
    contextTokens: started.contextTokens,
  };
}

export function countModelCall(state: RunState): RunState {
  return { ...state, modelCalls: state.modelCalls + 1, modelCallsThisRun: state.modelCallsThisRun + 1 };
}

/** Whether a model call's outcome came with an estimate of its prompt: only then does `calibrated-token-estimates` decide {@link applyModelReply}. */
export const hasPromptEstimate = (outcome: CallModelOutput): boolean => outcome.estimatedPromptTokens !== undefined;

/**
 * A model call came back: its conversation (with the pending messages appended) is the run's,
 * its usage is added (and its cost kept as the last call's, when it has one), nothing is pending.
 * With an estimate of the prompt ({@link hasPromptEstimate}) and `calibrate` (the
 * `calibrated-token-estimates` marker) the calibration ratio follows the server's count.
 */
export function applyModelReply(state: RunState, outcome: CallModelOutput, calibrate: boolean): RunState {
  const next: RunState = {
    ...clearPending(state),
    conversation: outcome.conversation,
    usage: addUsage(state.usage, outcome.usage),
    ...(outcome.usage.costUsd !== undefined ? { lastCallCostUsd: outcome.usage.costUsd } : {}),
    contextTokens: outcome.contextTokens,
    lastThought: outcome.turn.thought,
  };
  if (!hasPromptEstimate(outcome) || !calibrate) return next;
  return {
    ...next,
    serverTokensPerEstimatedToken: calibrationAfterCall(
      calibration(state),
      outcome.usage.promptTokens,
      outcome.estimatedPromptTokens,
    ),
  };
}

/** Compression came back: the compressed conversation (pending went into it), its size, and the step recorded. Unchanged when it changed nothing. */
export function applyCompression(state: RunState, compressed: CompressContextOutput): RunState {
  const before = state.conversation;
  if (compressed.conversation === before && !state.pending.length) return state;
  const contextTokens = inServerTokens(compressed.contextTokens, calibration(state));
  const next = { ...clearPending(state), conversation: compressed.conversation, contextTokens };
  return withDetails(next, {
    compressions: [
      ...state.details.compressions,
      {
        atModelCall: state.modelCalls + 1,
        stubbedObservations: compressed.stubbedObservations,
        summarizedTurns: compressed.summarizedTurns,
        before,
        after: compressed.conversation,
        contextTokensAfter: contextTokens,
      },
    ],
  });
}

/** A turn's tools ran: their observations, in call order, are what is pending. */
export function answerToolTurn(state: RunState, turn: Turn, protocol: Protocol): RunState {
  const answered = answerTurn(protocol, turn, '');
  const next = setPending(
    state,
    answered.messages,
    answered.tokens,
    turn.calls.map((call) => call.id),
  );
  return { ...next, toolCallsAnswered: state.toolCallsAnswered + turn.calls.length };
}

/** The calls of an open turn answered with `reason` where they have no result, after what is pending. */
export function closeOpenTurn(state: RunState, turn: Turn, reason: string, protocol: Protocol): RunState {
  const closed = answerTurn(protocol, turn, reason);
  return {
    ...appendPending(state, closed.messages, closed.tokens),
    toolCallsAnswered: state.toolCallsAnswered + turn.calls.length,
  };
}

/** Whether a turn has a call that could not be parsed: only then does `unusable-replies` decide {@link observeRepeats}. */
export const hasUnreadableCall = (calls: readonly ToolCallRequest[]): boolean =>
  calls.some((call) => call.problem !== undefined);

/**
 * Stuck detection over a turn's calls, in call order: a repeat gets a warning after the
 * observations, a repeat after a warning is stuck (and the calls after it are not looked at).
 * Unparseable calls ({@link hasUnreadableCall}) are left out when `watchReadableOnly` (the
 * `unusable-replies` marker).
 */
export function observeRepeats(
  state: RunState,
  calls: ToolCallRequest[],
  watchReadableOnly: boolean,
): { state: RunState; stuck: boolean } {
  let next = state;
  for (const call of hasUnreadableCall(calls) && watchReadableOnly ? watchedCalls(calls) : calls) {
    const observed = observeToolCall(next.stuck, callSignature(call.name, call.arguments));
    next = { ...next, stuck: observed.state };
    if (observed.verdict.kind === 'stuck') return { state: next, stuck: true };
    if (observed.verdict.kind === 'nudge')
      next = withDetails(appendPendingText(next, observed.verdict.message), {
        stuckNudges: next.details.stuckNudges + 1,
      });
  }
  return { state: next, stuck: false };
}

/** Budgets raised or lowered while the run goes (update `setLimits`, its changes validated). */
export function changeLimits(state: RunState, changes: Partial<RunLimits>): RunState {
  return { ...state, limits: { ...state.limits, ...changes } };
}

/** Someone asked the run to finish now. */
export function finishRequested(state: RunState): RunState {
  return withDetails(state, { finishRequested: true });
}

/** The state carried into the next run: one more continue-as-new, and the messages injected since the last call pending for the next. */
export function continuedRunState(state: RunState, injected: readonly string[]): RunState {
  return withDetails(deliverInjectedMessages(state, injected), { continuedAsNew: state.details.continuedAsNew + 1 });
}

/** The last messages of a run that ends: its open calls answered with why it ended, and the messages injected and not yet sent. */
export function closingState(
  state: RunState,
  openTurn: Turn | undefined,
  termination: Termination,
  injected: readonly string[],
  protocol: Protocol,
): RunState {
  const closed = openTurn ? closeOpenTurn(state, openTurn, closingReason(termination), protocol) : state;
  return deliverInjectedMessages(closed, injected);
}

/**
 * The state for the final answer call: why the phase runs is recorded; the open calls are answered
 * with why the run is ending; at the token limit the last observations are withheld (they are what
 * pushed the context past it); messages injected and not yet sent follow; and the request for the
 * final answer comes last.
 */
export function askForFinalAnswer(
  state: RunState,
  why: BudgetEnd | 'finish',
  openTurn: Turn | undefined,
  context: { protocol: Protocol; finishReason: string; injected: readonly string[] },
): RunState {
  return appendPendingText(
    prepareFinalAnswer(state, why, openTurn, context),
    finalAnswerRequest(why, context.protocol, context.finishReason),
  );
}

/** {@link askForFinalAnswer} but for the request itself, which the final answer's compression adds after compressing. */
export function prepareFinalAnswer(
  state: RunState,
  why: BudgetEnd | 'finish',
  openTurn: Turn | undefined,
  context: { protocol: Protocol; injected: readonly string[] },
): RunState {
  let next = withDetails(state, {
    finalAnswerPhase: why === 'finish' ? 'finish_requested' : terminationOfBudgetEnd(why),
  });
  if (openTurn) next = closeOpenTurn(next, openTurn, closingReason(why), context.protocol);
  if (why === 'token_limit' && next.pendingCallIds.length) {
    const withheld: Turn = {
      calls: next.pendingCallIds.map((id) => ({ id, name: '', arguments: {} })),
      results: new Map(),
    };
    const note = `[Output withheld: the context reached its limit of ${contextBudget(next).toLocaleString('en-US')} tokens. The whole output is kept in the transcript store.]`;
    next = setPending(next, answerTurn(context.protocol, withheld, note).messages, 0, next.pendingCallIds);
  }
  return deliverInjectedMessages(next, context.injected);
}

/** The request for the final answer, in the protocol's words, saying why it comes now. */
export function finalAnswerRequest(why: BudgetEnd | 'finish', protocol: Protocol, finishReason: string): string {
  return protocol.finalAnswerRequest(finalAnswerReason(why, finishReason));
}
