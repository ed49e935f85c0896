import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import type { CallModelOutput, ToolActivityOutput } from '../src/activity-contracts';
import { FailureTypes } from '../src/failure-types';
import { parseStructuredAnswer } from '../src/json-schema-validation';
import { addUsage, withUserText, ZERO_USAGE, type MessagePart, type PendingMessage } from '../src/messages';
import {
  decideFinalAnswer,
  FINAL_ANSWER_RETRIES_WHEN_TRUNCATED,
  protocolByName,
  TRUNCATED_REPLY_CALL_NOTE,
  truncatedReplyNote,
  type ParsedTurn,
  type ToolCallRequest,
} from '../src/protocols';
import { validateRunInput, type ResearchRunInput, type ResearchRunResult, type RunLimits } from '../src/run-input';
import type { RunState } from '../src/run-state';
import { REACT_ITERATIONS, REACT_TERMINATION } from '../src/search-attributes';
import { callSignature, INITIAL_STUCK_DETECTOR_STATE, observeToolCall, watchedCalls } from '../src/stuck-detection';
import type { Termination } from '../src/termination';
import { preview } from '../src/text';
import { calibrationAfterCall, inEstimatedTokens, inServerTokens, UNCALIBRATED } from '../src/token-calibration';
import type { ToolSpec } from '../src/tool-spec';
import { NO_UNUSABLE_REPLIES, recordReply, replyKind } from '../src/unusable-replies';
import {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
  type ApprovalDecision,
  type RunProgress,
} from './definitions';
import { modelActivityOptions, toolActivityOptions } from './activity-options';
import {
  closingReason,
  finalAnswerReason,
  malformedRepliesError,
  noAnswerPrediction,
  terminationOfBudgetEnd,
  type BudgetEnd,
  type EndingCause,
} from './ending-texts';
import { failureType, rootMessage } from './failures';
import { LoopPatches } from './patches';
import { answerTurn as answerTurnMessages, estimateTokens, type Turn } from './turns';

/** Opening and closing the transcript: quick store operations, so a lost attempt is retried soon. */
const bookkeeping = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** Compression may ask the model for a summary; it heartbeats, so a lost attempt shows within 20 s. */
const compression = proxyActivities<AgentActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});


/** Why the loop stopped, when it did not end on an answer or error of its own. */
type StopRequest = 'timeout' | 'finish' | undefined;

function initialState(input: ResearchRunInput, limits: RunLimits, startedAt: number): RunState {
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
    details: { protocol: input.protocol ?? 'deep-research', compressions: [], stuckNudges: 0, continuedAsNew: 0, truncatedReplies: 0, malformedReplies: 0 },
  };
}

/**
 * A ReAct research run: the model thinks and calls tools until it answers or a budget ends the
 * run. Every model call and tool call is an activity; the transcript lives in the transcript
 * store and history carries references. Budgets end through a last tool-less call for the best
 * answer; whatever ends the run, every tool call in the transcript gets a response and the run
 * returns a normal result saying why it ended. Long runs continue as new, carrying their state.
 */
export async function researchAgent(input: ResearchRunInput): Promise<ResearchRunResult> {
  const { limits: inputLimits, loop: options, problems } = validateRunInput(input);
  if (problems.length) {
    throw ApplicationFailure.create({ type: FailureTypes.invalidRunInput, message: `Invalid run input: ${problems.join('; ')}.`, nonRetryable: true });
  }
  const protocol = protocolByName(input.protocol);
  const state: RunState = input.resume ? { ...input.resume, modelCallsThisRun: 0 } : initialState(input, inputLimits, Date.now());
  const workflowId = workflowInfo().workflowId;

  let phase = 'starting';
  let termination: Termination | undefined;
  let prediction = '';
  let parsedAnswer: unknown;
  let errorMessage: string | undefined;
  let turn: Turn | undefined;
  let stopRequest: StopRequest;
  let ending = false;
  const injected: string[] = [];
  const decisions = new Map<string, ApprovalDecision>();
  const awaitingApproval = new Map<string, { tool: string; arguments: string }>();

  const elapsedMs = () => Date.now() - state.startedAt;
  const maxDurationMs = () => Math.round(state.limits.maxDurationMinutes * 60_000);
  /** Server tokens per token of our estimate, as last reported (src/token-calibration.ts). */
  const calibration = () => state.serverTokensPerEstimatedToken ?? UNCALIBRATED;
  /** The context the next model call will send, in the server's tokens. */
  const nextContextTokens = () => state.contextTokens + inServerTokens(state.pendingTokens, calibration());

  // ---- Messages: defined in workflows/definitions.ts, handled here. ----
  setHandler(progressQuery, (): RunProgress => ({
    phase,
    modelCalls: state.modelCalls,
    contextTokens: nextContextTokens(),
    totalTokens: state.usage.totalTokens,
    elapsedMs: elapsedMs(),
    limits: state.limits,
    remaining: {
      modelCalls: Math.max(0, state.limits.maxModelCalls - state.modelCalls),
      durationMs: Math.max(0, maxDurationMs() - elapsedMs()),
      contextTokens: Math.max(0, state.limits.maxContextTokens - nextContextTokens()),
      ...(state.limits.maxTotalTokens ? { totalTokens: Math.max(0, state.limits.maxTotalTokens - state.usage.totalTokens) } : {}),
    },
    lastThought: state.lastThought,
    openToolCalls: turn ? turn.calls.filter((call) => !turn?.results.has(call.id)).map((call) => `${call.name || '?'}(${preview(JSON.stringify(call.arguments), 80)})`) : [],
    awaitingApproval: [...awaitingApproval.entries()].map(([callId, call]) => ({ callId, tool: call.tool, arguments: call.arguments })),
    toolCalls: state.toolCallsAnswered,
    continuedAsNew: state.details.continuedAsNew,
    termination,
  }));

  setHandler(
    injectMessageUpdate,
    ({ text }) => {
      injected.push(text);
      return { modelCall: state.modelCalls + 1 };
    },
    {
      validator: (message) => {
        if (typeof message?.text !== 'string' || message.text.trim() === '') throw new Error('text must be a non-empty string');
        if (message.text.length > 20_000) throw new Error(`text is ${message.text.length} characters; the most is 20000`);
        if (ending) throw new Error('the run is already ending');
      },
    },
  );

  const loopScope = new CancellationScope();

  let finishReason = '';
  setHandler(
    finishNowUpdate,
    (request) => {
      finishReason = typeof request?.reason === 'string' ? request.reason.slice(0, 500) : '';
      stopRequest = 'finish';
      state.details.finishRequested = true;
      loopScope.cancel();
      return { modelCalls: state.modelCalls };
    },
    {
      validator: (_request) => {
        if (ending) throw new Error('the run is already ending');
      },
    },
  );

  let deadlineScope: CancellationScope | undefined;
  const armDeadline = () => {
    deadlineScope?.cancel();
    const scope = new CancellationScope();
    deadlineScope = scope;
    scope
      .run(() => sleep(Math.max(1, maxDurationMs() - elapsedMs())))
      .then(() => {
        if (deadlineScope !== scope || ending) return;
        stopRequest = 'timeout';
        loopScope.cancel();
      })
      .catch(() => undefined);
  };

  setHandler(
    setLimitsUpdate,
    (changes) => {
      state.limits = { ...state.limits, ...changes };
      if (changes.maxDurationMinutes !== undefined) armDeadline();
      return state.limits;
    },
    {
      validator: (changes) => {
        if (ending) throw new Error('the run is already ending');
        if (!changes || typeof changes !== 'object') throw new Error('give the limits to change');
        const known = ['maxModelCalls', 'maxDurationMinutes', 'maxContextTokens', 'maxTotalTokens'];
        const unknown = Object.keys(changes).filter((key) => !known.includes(key));
        if (unknown.length) throw new Error(`unknown limits: ${unknown.join(', ')} (known: ${known.join(', ')})`);
        const { problems: found } = validateRunInput({ question: 'x', limits: { ...state.limits, ...changes } });
        if (found.length) throw new Error(found.join('; '));
        if (changes.maxModelCalls !== undefined && changes.maxModelCalls < state.modelCalls) {
          throw new Error(`maxModelCalls ${changes.maxModelCalls} is below the ${state.modelCalls} calls already made`);
        }
        if (changes.maxDurationMinutes !== undefined && changes.maxDurationMinutes * 60_000 <= elapsedMs()) {
          throw new Error(`maxDurationMinutes ${changes.maxDurationMinutes} is not more than the ${(elapsedMs() / 60_000).toFixed(1)} minutes already used`);
        }
      },
    },
  );

  setHandler(
    approveToolCallUpdate,
    (decision) => {
      decisions.set(decision.callId, decision);
      return { callId: decision.callId, approved: decision.approved };
    },
    {
      validator: (decision) => {
        if (!decision || typeof decision.callId !== 'string' || typeof decision.approved !== 'boolean') throw new Error('give callId and approved');
        if (!awaitingApproval.has(decision.callId)) {
          const waiting = [...awaitingApproval.keys()];
          throw new Error(`no tool call ${decision.callId} is waiting for approval${waiting.length ? ` (waiting: ${waiting.join(', ')})` : ''}`);
        }
      },
    },
  );

  // ---- Opening the transcript (once per workflow; a continued run already has it). ----
  if (!state.setup) {
    try {
      upsertSearchAttributes([{ key: REACT_ITERATIONS, value: 0 }]);
      const started = await bookkeeping.startConversation({
        question: input.question,
        protocol: protocol.name,
        tools: input.tools,
        today: new Date(state.startedAt).toISOString().slice(0, 10),
        ...(input.answerSchema ? { answerSchema: input.answerSchema } : {}),
      });
      state.setup = { tools: started.tools, modelActivity: started.modelActivity, model: started.model };
      state.conversation = started.conversation;
      state.contextTokens = started.contextTokens;
    } catch (error) {
      if (isCancellation(error)) {
        upsertSearchAttributes([{ key: REACT_TERMINATION, value: 'cancelled' }]);
        return {
          question: input.question,
          answer: input.answer ?? '',
          prediction: 'No answer: the run was cancelled.',
          termination: 'cancelled',
          transcript: '',
          iterations: 0,
          toolCalls: 0,
          usage: state.usage,
          contextTokens: 0,
          durationMs: elapsedMs(),
          details: state.details,
        };
      }
      throw ApplicationFailure.create({ type: failureType(error) ?? FailureTypes.invalidRunInput, message: rootMessage(error), nonRetryable: true });
    }
  }
  const setup = state.setup;
  const toolsByName = new Map<string, ToolSpec>(setup.tools.map((tool) => [tool.name, tool]));
  const toolNames = setup.tools.map((tool) => tool.name);
  const modelOptions = { ...(input.model ?? {}), model: input.model?.model ?? setup.model };
  const modelOptionsForActivity = modelActivityOptions(setup.modelActivity);
  const model = proxyActivities<AgentActivities>(modelOptionsForActivity);

  const callModel = (finalAnswer: boolean, extraOptions: Partial<ActivityOptions> = {}): Promise<CallModelOutput> => {
    state.modelCalls += 1;
    state.modelCallsThisRun += 1;
    phase = finalAnswer ? 'final_answer' : 'calling_model';
    setCurrentDetails(`Model call ${state.modelCalls} of ${state.limits.maxModelCalls}; about ${nextContextTokens()} context tokens.`);
    return model.callModel.executeWithOptions(
      { ...modelOptionsForActivity, ...extraOptions, summary: finalAnswer ? `final answer (call ${state.modelCalls})` : `model call ${state.modelCalls}` },
      [{ workflowId, modelCall: state.modelCalls, conversation: state.conversation, append: state.pending, model: modelOptions, protocol: protocol.name, tools: toolNames, finalAnswer }],
    );
  };

  const accept = (outcome: CallModelOutput) => {
    state.conversation = outcome.conversation;
    state.usage = addUsage(state.usage, outcome.usage);
    state.contextTokens = outcome.contextTokens;
    state.pending = [];
    state.pendingTokens = 0;
    state.pendingCallIds = [];
    state.lastThought = outcome.turn.thought;
    if (outcome.estimatedPromptTokens !== undefined && patched(LoopPatches.calibratedTokenEstimates)) {
      state.serverTokensPerEstimatedToken = calibrationAfterCall(calibration(), outcome.usage.promptTokens, outcome.estimatedPromptTokens);
    }
  };

  /** Answers a truncated reply: its tool calls are not run, and `note` (if any) asks for a shorter reply. */
  const answerTruncatedReply = (parsed: ParsedTurn, note: string | undefined) => {
    let pending: PendingMessage[] = [];
    let tokens = 0;
    if (parsed.toolCalls.length) {
      const answered = answerTurn({ calls: parsed.toolCalls, results: new Map() }, TRUNCATED_REPLY_CALL_NOTE);
      state.toolCallsAnswered += parsed.toolCalls.length;
      pending = answered.messages;
      tokens = answered.tokens;
    }
    if (note !== undefined) {
      pending = pending.length ? withUserText(pending, note) : [protocol.renderCorrection(note)];
      tokens += estimateTokens(note);
    }
    state.pending = pending;
    state.pendingTokens = tokens;
    state.pendingCallIds = [];
  };

  const addPendingText = (text: string) => {
    state.pending = withUserText(state.pending, text);
    state.pendingTokens += estimateTokens(text);
  };

  // ---- Tools: approval, bounded parallelism, results in call order. ----
  const waitForApproval = async (call: ToolCallRequest): Promise<string | undefined> => {
    awaitingApproval.set(call.id, { tool: call.name, arguments: preview(JSON.stringify(call.arguments), 300) });
    try {
      const decided = await condition(() => decisions.has(call.id), `${options.approvalTimeoutMinutes * 60} seconds`);
      if (!decided) return `Not run: no one approved this call of "${call.name}" within ${options.approvalTimeoutMinutes} minutes.`;
      const decision = decisions.get(call.id) as ApprovalDecision;
      if (!decision.approved) return `Not run: the call of "${call.name}" was denied${decision.reviewer ? ` by ${decision.reviewer}` : ''}${decision.reason ? `: ${decision.reason}` : '.'}`;
      return undefined;
    } finally {
      awaitingApproval.delete(call.id);
    }
  };

  const runToolCall = async (call: ToolCallRequest): Promise<{ parts: MessagePart[]; tokens: number }> => {
    const note = (text: string) => ({ parts: [{ text }], tokens: estimateTokens(text) });
    if (call.problem) return note(call.problem);
    const spec = toolsByName.get(call.name);
    if (!spec) return note(`Error: there is no tool named "${call.name}". Available tools: ${toolNames.join(', ') || 'none'}.`);
    if (spec.requiresApproval) {
      const refusal = await waitForApproval(call);
      if (refusal) return note(refusal);
    }
    const activityOptions = toolActivityOptions(spec.activity, call.arguments);
    try {
      const tool = proxyActivities<Record<string, (toolInput: unknown) => Promise<ToolActivityOutput>>>(activityOptions)[call.name];
      if (!tool) return note(`Error: there is no tool named "${call.name}".`);
      const outcome = await tool.executeWithOptions(activityOptions, [
        { workflowId, callId: call.id, arguments: call.arguments, maxObservationCharacters: state.limits.maxObservationCharacters },
      ]);
      return { parts: [{ ref: outcome.observation.ref }], tokens: outcome.tokens };
    } catch (error) {
      if (isCancellation(error)) throw error;
      return note(`Error: the tool "${call.name}" failed: ${rootMessage(error)}`);
    }
  };

  const runTurn = async (current: Turn) => {
    let next = 0;
    const lanes = Array.from({ length: Math.min(options.maxParallelToolCalls, current.calls.length) }, async () => {
      while (next < current.calls.length) {
        const call = current.calls[next++] as ToolCallRequest;
        current.results.set(call.id, await runToolCall(call));
      }
    });
    // Wait for every lane, even after a cancellation, so no tool is still running when the run reports its end.
    const settled = await Promise.allSettled(lanes);
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  };

  const answerTurn = (current: Turn, reason: string) => answerTurnMessages(protocol, current, reason);

  /** Checks the answer against the schema; false when the model must try again. */
  const acceptAnswer = (answer: string): boolean => {
    if (!input.answerSchema) {
      prediction = answer;
      return true;
    }
    state.answerAttempts += 1;
    const parsed = parseStructuredAnswer(answer, input.answerSchema);
    prediction = answer;
    if (!parsed.problems.length) {
      parsedAnswer = parsed.value;
      return true;
    }
    if (state.answerAttempts >= options.answerAttempts) {
      errorMessage = `The answer did not match the answer schema after ${state.answerAttempts} attempts: ${parsed.problems.join('; ')}`;
      return true;
    }
    addPendingText(
      `Your final answer does not match the required JSON schema: ${parsed.problems.join('; ')}. ` +
        `Give the final answer again as JSON matching this schema: ${JSON.stringify(input.answerSchema)}`,
    );
    return false;
  };

  /** Stubs old observations (and summarises old turns) when the context passes the threshold. */
  const compressIfNeeded = async () => {
    const ratio = calibration();
    if (options.compressAtFraction <= 0 || nextContextTokens() <= options.compressAtFraction * state.limits.maxContextTokens) return;
    phase = 'compressing';
    const before = state.conversation;
    const compressed = await compression.compressContext({
      workflowId,
      conversation: state.conversation,
      append: state.pending,
      protocol: protocol.name,
      question: input.question,
      keepRecentTurns: options.keepRecentTurns,
      targetTokens: inEstimatedTokens(Math.floor(options.compressAtFraction * state.limits.maxContextTokens * 0.75), ratio),
      summarize: options.summarizeOldTurns,
      model: modelOptions,
    });
    if (compressed.conversation === before && !state.pending.length) return;
    state.conversation = compressed.conversation;
    state.pending = [];
    state.pendingCallIds = [];
    state.pendingTokens = 0;
    state.contextTokens = inServerTokens(compressed.contextTokens, ratio);
    state.details.compressions.push({
      atModelCall: state.modelCalls + 1,
      stubbedObservations: compressed.stubbedObservations,
      summarizedTurns: compressed.summarizedTurns,
      before,
      after: compressed.conversation,
      contextTokensAfter: state.contextTokens,
    });
  };

  const shouldContinueAsNew = () =>
    workflowInfo().continueAsNewSuggested || (options.continueAsNewAfterModelCalls > 0 && state.modelCallsThisRun >= options.continueAsNewAfterModelCalls);

  // ---- The loop. ----
  let budgetEnd: BudgetEnd | undefined;
  let continueAsNewNow = false;
  const endOnMalformedReplies = () => {
    state.details.replyLimit = 'maxMalformedReplies';
    errorMessage = malformedRepliesError(state.unusableReplies?.malformed ?? options.maxMalformedReplies, protocol.name);
    budgetEnd = 'malformed_replies';
  };
  armDeadline();
  try {
    await loopScope.run(async () => {
      for (;;) {
        if (elapsedMs() >= maxDurationMs()) {
          stopRequest = 'timeout';
          return;
        }
        if (state.modelCalls >= state.limits.maxModelCalls) {
          budgetEnd = 'max_calls';
          return;
        }
        if (state.limits.maxTotalTokens && state.usage.totalTokens >= state.limits.maxTotalTokens) {
          budgetEnd = 'token_limit';
          return;
        }
        if (state.modelCallsThisRun > 0 && shouldContinueAsNew()) {
          continueAsNewNow = true;
          return;
        }
        while (injected.length) addPendingText(`[Message from the user] ${injected.shift() as string}`);
        await compressIfNeeded();
        if (nextContextTokens() > state.limits.maxContextTokens) {
          budgetEnd = 'token_limit';
          return;
        }

        let outcome: CallModelOutput;
        try {
          outcome = await callModel(false);
        } catch (error) {
          if (isCancellation(error)) throw error;
          if (failureType(error) === FailureTypes.modelContextLengthExceeded) {
            budgetEnd = 'token_limit';
            return;
          }
          termination = 'error';
          errorMessage = rootMessage(error);
          prediction = `No answer: ${errorMessage}`;
          return;
        }
        accept(outcome);
        const parsed: ParsedTurn = outcome.turn;
        const reply = replyKind(protocol.name, parsed, outcome.finishReason);
        // A run recorded before replies were sorted replays its unusable replies the old way (LoopPatches).
        let malformedLimitReached = false;
        if (reply.kind === 'usable' || patched(LoopPatches.unusableReplies)) {
          const recorded = recordReply(state.unusableReplies ?? NO_UNUSABLE_REPLIES, reply, options);
          state.unusableReplies = recorded.streak;
          if (reply.kind === 'truncated') {
            state.details.truncatedReplies = (state.details.truncatedReplies ?? 0) + 1;
            answerTruncatedReply(parsed, recorded.limitReached ? undefined : truncatedReplyNote(protocol.name, reply.truncation));
            if (recorded.limitReached) {
              state.details.replyLimit = 'maxTruncatedReplies';
              budgetEnd = 'truncated_replies';
              return;
            }
            continue;
          }
          if (reply.kind === 'malformed') {
            state.details.malformedReplies = (state.details.malformedReplies ?? 0) + 1;
            malformedLimitReached = recorded.limitReached;
          }
        }
        if (parsed.answer !== undefined) {
          if (parsed.toolCalls.length) turn = { calls: parsed.toolCalls, results: new Map() };
          if (acceptAnswer(parsed.answer)) {
            termination = errorMessage ? 'error' : 'answer';
            return;
          }
          if (turn) {
            const closed = answerTurn(turn, 'Not run: the reply also contained a final answer.');
            state.pending = [...closed.messages, ...state.pending];
            state.toolCallsAnswered += turn.calls.length;
            turn = undefined;
          }
          continue;
        }
        if (parsed.toolCalls.length === 0) {
          state.pending = [protocol.renderCorrection(parsed.problem ?? 'Call a tool, or give your final answer.')];
          state.pendingTokens = estimateTokens(parsed.problem ?? '');
          if (malformedLimitReached) {
            endOnMalformedReplies();
            return;
          }
          continue;
        }

        const current: Turn = { calls: parsed.toolCalls, results: new Map() };
        turn = current;
        phase = 'running_tools';
        await runTurn(current);
        turn = undefined;
        state.toolCallsAnswered += current.calls.length;
        const answered = answerTurn(current, '');
        state.pending = answered.messages;
        state.pendingTokens = answered.tokens;
        state.pendingCallIds = current.calls.map((call) => call.id);

        if (options.stuckDetection) {
          const unreadable = current.calls.some((call) => call.problem !== undefined);
          for (const call of unreadable && patched(LoopPatches.unusableReplies) ? watchedCalls(current.calls) : current.calls) {
            const observed = observeToolCall(state.stuck, callSignature(call.name, call.arguments));
            state.stuck = observed.state;
            if (observed.verdict.kind === 'nudge') {
              state.details.stuckNudges += 1;
              addPendingText(observed.verdict.message);
            } else if (observed.verdict.kind === 'stuck') {
              budgetEnd = 'stuck';
              return;
            }
          }
        }
        if (malformedLimitReached) {
          endOnMalformedReplies();
          return;
        }
      }
    });
  } catch (error) {
    if (!isCancellation(error)) throw error;
    if (stopRequest === undefined) termination = 'cancelled';
  }
  deadlineScope?.cancel();

  if (continueAsNewNow) {
    ending = true;
    await condition(allHandlersFinished);
    state.details.continuedAsNew += 1;
    upsertSearchAttributes([{ key: REACT_ITERATIONS, value: state.modelCalls }]);
    return continueAsNew<typeof researchAgent>({ ...input, resume: state });
  }

  // ---- The final answer phase: one tool-less call for the best answer. ----
  if (stopRequest === 'timeout') budgetEnd = 'timeout';
  const closeOpenTurn = (why: EndingCause) => {
    if (!turn) return;
    const closed = answerTurn(turn, closingReason(why));
    state.toolCallsAnswered += turn.calls.length;
    state.pending = [...state.pending, ...closed.messages];
    state.pendingTokens += closed.tokens;
    turn = undefined;
  };

  /** One call of the final answer phase; true when its answer was cut off and is asked for again. */
  const callForFinalAnswer = async (retriesLeft: number): Promise<boolean> => {
    const outcome = await CancellationScope.cancellable(() => callModel(true, { startToCloseTimeout: `${options.finalAnswerTimeoutSeconds} seconds`, retry: { maximumAttempts: 2 } }));
    accept(outcome);
    const decision = decideFinalAnswer(protocol.name, outcome.turn, outcome.finishReason, retriesLeft);
    if (decision.kind !== 'accept' && patched(LoopPatches.unusableReplies)) {
      state.details.truncatedReplies = (state.details.truncatedReplies ?? 0) + 1;
      switch (decision.kind) {
        case 'ask_again':
          answerTruncatedReply(outcome.turn, decision.note);
          return true;
        case 'keep_marked':
          state.details.truncatedAnswer = true;
          if (outcome.turn.toolCalls.length) turn = { calls: outcome.turn.toolCalls, results: new Map() };
          if (decision.answer !== undefined) acceptAnswer(decision.answer);
          return false;
        default: {
          const unknown: never = decision;
          throw new Error(`unknown final answer decision ${JSON.stringify(unknown)}`);
        }
      }
    }
    if (outcome.turn.toolCalls.length) turn = { calls: outcome.turn.toolCalls, results: new Map() };
    if (outcome.turn.answer !== undefined) acceptAnswer(outcome.turn.answer);
    return false;
  };

  const wantsFinalAnswer = termination === undefined && (stopRequest === 'finish' || (budgetEnd !== undefined && options.finalAnswerPhase));
  if (wantsFinalAnswer) {
    ending = true;
    const why: EndingCause = stopRequest === 'finish' ? 'finish' : (budgetEnd as BudgetEnd);
    state.details.finalAnswerPhase = why === 'finish' ? 'finish_requested' : terminationOfBudgetEnd(why);
    closeOpenTurn(why);
    if (why === 'token_limit' && state.pendingCallIds.length) {
      // Withhold the last observations: they are what pushed the context past its limit.
      const withheld: Turn = { calls: state.pendingCallIds.map((id) => ({ id, name: '', arguments: {} })), results: new Map() };
      const note = `[Output withheld: the context reached its limit of ${state.limits.maxContextTokens.toLocaleString('en-US')} tokens. The whole output is kept in the transcript store.]`;
      state.pending = answerTurn(withheld, note).messages;
      state.pendingTokens = 0;
    }
    const reason = finalAnswerReason(why, finishReason);
    addPendingText(protocol.finalAnswerRequest(reason));
    try {
      let retriesLeft = FINAL_ANSWER_RETRIES_WHEN_TRUNCATED;
      while (await callForFinalAnswer(retriesLeft)) retriesLeft -= 1;
    } catch (error) {
      if (isCancellation(error)) termination = 'cancelled';
      else errorMessage = errorMessage ? `${errorMessage} The final answer call failed: ${rootMessage(error)}` : rootMessage(error);
    }
    if (termination === undefined) termination = why === 'finish' ? (prediction ? 'answer' : 'cancelled') : terminationOfBudgetEnd(why);
  } else if (termination === undefined) {
    termination = budgetEnd !== undefined ? terminationOfBudgetEnd(budgetEnd) : stopRequest === 'timeout' ? 'timeout' : 'cancelled';
  }
  if (!prediction) prediction = noAnswerPrediction(termination as Termination, state.limits);

  // ---- Finishing: answer every open call, store the last messages, record the ending. ----
  return CancellationScope.nonCancellable(async () => {
    ending = true;
    phase = 'finishing';
    const ended = termination as Termination;
    closeOpenTurn(ended);
    let transcript = state.conversation;
    try {
      transcript = (await bookkeeping.finishTranscript({ conversation: state.conversation, append: state.pending })).conversation;
    } catch (error) {
      errorMessage = `${errorMessage ? `${errorMessage}; ` : ''}the last messages could not be stored: ${rootMessage(error)}`;
    }
    phase = 'done';
    upsertSearchAttributes([
      { key: REACT_TERMINATION, value: ended },
      { key: REACT_ITERATIONS, value: state.modelCalls },
    ]);
    setCurrentDetails(`Ended: ${ended} after ${state.modelCalls} model calls.`);
    await condition(allHandlersFinished);
    return {
      question: input.question,
      answer: input.answer ?? '',
      prediction,
      termination: ended,
      transcript,
      iterations: state.modelCalls,
      toolCalls: state.toolCallsAnswered,
      usage: state.usage,
      contextTokens: state.contextTokens,
      durationMs: elapsedMs(),
      ...(errorMessage ? { error: errorMessage } : {}),
      ...(parsedAnswer !== undefined ? { parsedAnswer } : {}),
      details: state.details,
    };
  });
}
