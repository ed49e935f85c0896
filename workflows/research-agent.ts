import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import type { CallModelOutput, StartConversationOutput, ToolActivityOutput } from '../src/activity-contracts';
import { FailureTypes } from '../src/failure-types';
import { addUsage, ZERO_USAGE, type MessagePart, type PendingMessage } from '../src/messages';
import { deepResearchProtocol } from '../src/protocols/deep-research-protocol';
import type { ToolCallRequest } from '../src/protocols/protocol';
import { validateRunInput, type ResearchRunInput, type ResearchRunResult } from '../src/run-input';
import { REACT_ITERATIONS, REACT_TERMINATION } from '../src/search-attributes';
import type { Termination } from '../src/termination';
import { preview } from '../src/text';
import { progressQuery, type RunProgress } from './definitions';

const protocol = deepResearchProtocol;

const bookkeeping = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * The message that says what went wrong: the first ApplicationFailure's (activities word those
 * for people), else the innermost cause's.
 */
function rootMessage(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && current.message) return current.message;
    if (current.message) message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

function failureType(error: unknown): string | undefined {
  let current: unknown = error;
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && current.type) return current.type;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Rough token estimate of text the workflow writes itself (notes, tags). */
const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The tool calls of one model turn and what has come back for each. */
interface Turn {
  calls: ToolCallRequest[];
  results: Map<string, { parts: MessagePart[]; tokens: number }>;
}

/**
 * A ReAct research run: the model thinks and calls tools until it answers or a budget ends the
 * run. Every model call and tool call is an activity; the transcript lives in the transcript
 * store and history carries references. Whatever ends the run, every tool call in the
 * transcript gets a response and the run returns a normal result saying why it ended.
 */
export async function researchAgent(input: ResearchRunInput): Promise<ResearchRunResult> {
  const startedAt = Date.now();
  const { limits, problems } = validateRunInput(input);
  if (problems.length) {
    throw ApplicationFailure.create({ type: FailureTypes.invalidRunInput, message: `Invalid run input: ${problems.join('; ')}.`, nonRetryable: true });
  }
  const maxDurationMs = Math.round(limits.maxDurationMinutes * 60_000);
  const workflowId = workflowInfo().workflowId;

  let phase = 'starting';
  let modelCalls = 0;
  let toolCallsAnswered = 0;
  let contextTokens = 0;
  let usage = ZERO_USAGE;
  let lastThought = '';
  let termination: Termination | undefined;
  let prediction = '';
  let errorMessage: string | undefined;
  let conversation = '';
  /** Messages to append before the next model call (the last turn's observations). */
  let pending: PendingMessage[] = [];
  let pendingTokens = 0;
  /** The turn whose tools are running (or were interrupted). */
  let turn: Turn | undefined;
  /** The completed turn whose observations are in `pending`. */
  let pendingTurn: Turn | undefined;
  let timedOut = false;

  setHandler(progressQuery, (): RunProgress => ({
    phase,
    modelCalls,
    maxModelCalls: limits.maxModelCalls,
    contextTokens: contextTokens + pendingTokens,
    maxContextTokens: limits.maxContextTokens,
    elapsedMs: Date.now() - startedAt,
    maxDurationMs,
    lastThought,
    openToolCalls: turn ? turn.calls.filter((call) => !turn?.results.has(call.id)).map((call) => `${call.name || '?'}(${preview(JSON.stringify(call.arguments), 80)})`) : [],
    toolCalls: toolCallsAnswered,
    termination,
  }));
  upsertSearchAttributes([{ key: REACT_ITERATIONS, value: 0 }]);

  let started: StartConversationOutput;
  try {
    started = await bookkeeping.startConversation({ question: input.question, tools: input.tools, today: new Date(startedAt).toISOString().slice(0, 10) });
  } catch (error) {
    if (isCancellation(error)) {
      upsertSearchAttributes([{ key: REACT_TERMINATION, value: 'cancelled' }]);
      return { question: input.question, answer: input.answer ?? '', prediction: 'No answer: the run was cancelled.', termination: 'cancelled', transcript: '', iterations: 0, toolCalls: 0, usage, contextTokens: 0, durationMs: Date.now() - startedAt };
    }
    throw ApplicationFailure.create({ type: failureType(error) ?? FailureTypes.invalidRunInput, message: rootMessage(error), nonRetryable: true });
  }
  conversation = started.conversation;
  contextTokens = started.contextTokens;
  const toolsByName = new Map(started.tools.map((tool) => [tool.name, tool]));
  const modelSettings = started.modelActivity;
  const modelOptions = { ...(input.model ?? {}), model: input.model?.model ?? started.model };

  const modelActivityOptions: ActivityOptions = {
    startToCloseTimeout: `${modelSettings.startToCloseSeconds} seconds`,
    heartbeatTimeout: `${modelSettings.heartbeatSeconds} seconds`,
    // The reply of a cancelled call is thrown away: no need to wait for the worker to confirm.
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '60 seconds', maximumAttempts: modelSettings.maxAttempts },
    ...(modelSettings.taskQueue ? { taskQueue: modelSettings.taskQueue } : {}),
  };
  const model = proxyActivities<AgentActivities>(modelActivityOptions);

  const callModel = (append: PendingMessage[], finalAnswer: boolean): Promise<CallModelOutput> => {
    modelCalls += 1;
    phase = 'calling_model';
    setCurrentDetails(`Model call ${modelCalls} of ${limits.maxModelCalls}; ${contextTokens} context tokens.`);
    return model.callModel.executeWithOptions({ ...modelActivityOptions, summary: finalAnswer ? `final answer (call ${modelCalls})` : `model call ${modelCalls}` }, [
      { workflowId, modelCall: modelCalls, conversation, append, model: modelOptions, finalAnswer },
    ]);
  };

  const accept = (outcome: CallModelOutput) => {
    conversation = outcome.conversation;
    usage = addUsage(usage, outcome.usage);
    contextTokens = outcome.contextTokens;
    pending = [];
    pendingTokens = 0;
    pendingTurn = undefined;
    lastThought = outcome.turn.thought;
  };

  const runToolCall = async (call: ToolCallRequest): Promise<{ parts: MessagePart[]; tokens: number }> => {
    const note = (text: string) => ({ parts: [{ text }], tokens: estimateTokens(text) });
    if (call.problem) return note(call.problem);
    const spec = toolsByName.get(call.name);
    if (!spec) {
      return note(`Error: there is no tool named "${call.name}". Available tools: ${[...toolsByName.keys()].join(', ') || 'none'}.`);
    }
    const settings = spec.activity;
    const options: ActivityOptions = {
      startToCloseTimeout: `${settings.startToCloseSeconds} seconds`,
      heartbeatTimeout: `${settings.heartbeatSeconds} seconds`,
      // Wait until the worker confirms the tool stopped, so a cancelled run never leaves a tool running.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: `${settings.initialRetrySeconds} seconds`, backoffCoefficient: 2, maximumAttempts: settings.maxAttempts },
      ...(settings.taskQueue ? { taskQueue: settings.taskQueue } : {}),
      summary: `${call.name} ${preview(JSON.stringify(call.arguments), 120)}`,
    };
    try {
      const tool = proxyActivities<Record<string, (toolInput: unknown) => Promise<ToolActivityOutput>>>(options)[call.name];
      if (!tool) return note(`Error: there is no tool named "${call.name}".`);
      const outcome = await tool.executeWithOptions(options, [
        { workflowId, callId: call.id, arguments: call.arguments, maxObservationCharacters: limits.maxObservationCharacters },
      ]);
      return { parts: [{ ref: outcome.observation.ref }], tokens: outcome.tokens };
    } catch (error) {
      if (isCancellation(error)) throw error;
      return note(`Error: the tool "${call.name}" failed: ${rootMessage(error)}`);
    }
  };

  /** The message answering every call of the turn, with `reason` for the calls that have no result. */
  const answerTurn = (current: Turn, reason: string): { message: PendingMessage; tokens: number } => {
    let tokens = 0;
    const observations = current.calls.map((call) => {
      const result = current.results.get(call.id) ?? { parts: [{ text: reason }], tokens: estimateTokens(reason) };
      tokens += result.tokens + 10;
      return result.parts;
    });
    return { message: protocol.renderObservations(observations), tokens };
  };

  const loop = new CancellationScope();
  const deadline = new CancellationScope();
  deadline
    .run(() => sleep(Math.max(0, maxDurationMs - (Date.now() - startedAt))))
    .then(() => {
      timedOut = true;
      loop.cancel();
    })
    .catch(() => undefined);

  /** Asks for the final answer after the context budget ran out; the last turn's outputs are withheld. */
  const finalAnswerForTokenLimit = async (why: string) => {
    termination = 'token_limit';
    if (pendingTurn) {
      const withheld = `[Output withheld: the context reached its limit of ${limits.maxContextTokens.toLocaleString('en-US')} tokens. The whole output is kept in the transcript store.]`;
      pendingTurn.results.clear();
      pending = [answerTurn(pendingTurn, withheld).message];
      pendingTurn = undefined;
    }
    const request = protocol.finalAnswerRequest(why);
    const last = pending.pop();
    pending.push(last ? { role: last.role, parts: [...last.parts, { text: `\n\n${request}` }] } : { role: 'user', parts: [{ text: request }] });
    pendingTokens = estimateTokens(request);
    try {
      const outcome = await callModel(pending, true);
      accept(outcome);
      prediction = outcome.turn.answer ?? 'No answer found.';
      if (outcome.turn.toolCalls.length) turn = { calls: outcome.turn.toolCalls, results: new Map() };
    } catch (error) {
      if (isCancellation(error)) throw error;
      prediction = 'No answer found.';
      errorMessage = rootMessage(error);
    }
  };

  try {
    await loop.run(async () => {
      for (;;) {
        if (modelCalls >= limits.maxModelCalls) {
          termination = 'max_calls';
          prediction = 'No answer found: the model-call budget ran out.';
          return;
        }
        if (contextTokens + pendingTokens > limits.maxContextTokens) {
          await finalAnswerForTokenLimit('You have reached the maximum context length you can handle.');
          return;
        }
        let outcome: CallModelOutput;
        try {
          outcome = await callModel(pending, false);
        } catch (error) {
          if (isCancellation(error)) throw error;
          if (failureType(error) === FailureTypes.modelContextLengthExceeded) {
            await finalAnswerForTokenLimit('The conversation no longer fits your context window.');
            return;
          }
          termination = 'error';
          errorMessage = rootMessage(error);
          prediction = `No answer: ${errorMessage}`;
          return;
        }
        accept(outcome);
        const parsed = outcome.turn;
        if (parsed.answer !== undefined) {
          termination = 'answer';
          prediction = parsed.answer;
          if (parsed.toolCalls.length) turn = { calls: parsed.toolCalls, results: new Map() };
          return;
        }
        if (parsed.toolCalls.length === 0) {
          const correction = parsed.problem ?? 'Call a tool or give your final answer inside <answer></answer>.';
          pending = [protocol.renderCorrection(correction)];
          pendingTokens = estimateTokens(correction);
          continue;
        }
        const current: Turn = { calls: parsed.toolCalls, results: new Map() };
        turn = current;
        phase = 'running_tools';
        for (const call of current.calls) {
          current.results.set(call.id, await runToolCall(call));
        }
        turn = undefined;
        toolCallsAnswered += current.calls.length;
        const answered = answerTurn(current, '');
        pending = [answered.message];
        pendingTokens = answered.tokens;
        pendingTurn = current;
      }
    });
  } catch (error) {
    if (!isCancellation(error)) throw error;
    termination = timedOut ? 'timeout' : 'cancelled';
    prediction = timedOut ? `No answer found after ${limits.maxDurationMinutes} minutes.` : 'No answer: the run was cancelled.';
  }

  return CancellationScope.nonCancellable(async () => {
    deadline.cancel();
    phase = 'finishing';
    const ended: Termination = termination ?? 'error';
    const append = [...pending];
    if (turn) {
      const reason =
        ended === 'answer'
          ? 'Not run: the final answer was given in the same reply.'
          : ended === 'cancelled'
            ? 'Not completed: the run was cancelled while this tool call was open.'
            : ended === 'timeout'
              ? 'Not completed: the run reached its time limit while this tool call was open.'
              : `Not run: the run ended (${ended}).`;
      append.push(answerTurn(turn, reason).message);
      toolCallsAnswered += turn.calls.length;
      turn = undefined;
    }
    let transcript = conversation;
    try {
      transcript = (await bookkeeping.finishTranscript({ conversation, append })).conversation;
    } catch (error) {
      errorMessage = `${errorMessage ? `${errorMessage}; ` : ''}the last messages could not be stored: ${rootMessage(error)}`;
    }
    termination = ended;
    phase = 'done';
    upsertSearchAttributes([
      { key: REACT_TERMINATION, value: ended },
      { key: REACT_ITERATIONS, value: modelCalls },
    ]);
    setCurrentDetails(`Ended: ${ended} after ${modelCalls} model calls.`);
    return {
      question: input.question,
      answer: input.answer ?? '',
      prediction,
      termination: ended,
      transcript,
      iterations: modelCalls,
      toolCalls: toolCallsAnswered,
      usage,
      contextTokens,
      durationMs: Date.now() - startedAt,
      ...(errorMessage ? { error: errorMessage } : {}),
    };
  });
}
