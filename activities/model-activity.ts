import { Context } from '@temporalio/activity';
import type { Span } from '@opentelemetry/api';
import type { CallModelInput, CallModelOutput } from '../src/core/activity-contracts';
import type { ModelPrices } from '../src/domain/model-prices';
import { SecretRedactor } from '../src/domain/secret-redaction';
import { DEFAULT_MAX_TOOL_CALLS_PER_REPLY, protocolByName, type Protocol } from '../src/core/protocols';
import type { ToolSpec } from '../src/core/tool-spec';
import { loadToolSpecs } from '../src/storage/conversation';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { ModelCallMetrics } from './metrics/model-call-metrics';
import {
  modelRequest,
  withWorkflowId,
  type CallModelInputOfRun,
  type SamplingDefaults,
} from './model-call/model-request';
import { preparePrompt, type PreparedPrompt } from './model-call/prompt';
import { assistantMessageOf, callModelOutput, recordReply, replyUsage, withReasoningThought } from './model-call/reply';
import type { LiveTextChannels, LiveTextSink } from './live-text/live-text-server';
import { heartbeatOf, StreamedText, type CallOfHeartbeat } from './model-call/streamed-text';
import { chatControls } from './model/chat-controls';
import type { ChatModel } from './model/chat-model';
import { settleAnsweredCall, settleFailedCall, waitForModelLimit } from './model-limits/model-limit-wait';
import type { ModelLimitGate, ModelLimitTicket } from './model-limits/shared-model-limits';
import type { TokenCounter } from './token-counter';
import type { ToolRegistry } from './tools/tool-registry';
import {
  inModelCallSpan,
  setModelInputContent,
  setModelOutputContent,
  setModelResponse,
  type TraceContentOptions,
} from './tracing/agent-spans';

/** Sampling defaults the worker applies when a run does not set them, and the limits of its model calls. */
export interface ModelDefaults extends SamplingDefaults {
  /** Model name (REACT_AGENT_MODEL). */
  model: string;
  /**
   * Longest wait for the reply's first chunk, in seconds (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS);
   * default 300 (`DEFAULT_FIRST_CHUNK_LIMIT_MS`). Once chunks flow, {@link stallSeconds} bounds the gaps.
   */
  firstTokenSeconds?: number;
  /**
   * Longest gap between two chunks once the reply streams, in seconds (REACT_AGENT_MODEL_STALL_SECONDS);
   * default: the call's heartbeat timeout, as before the two were separate.
   */
  stallSeconds?: number;
  /**
   * Tool calls of one reply that run (REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY); the rest are answered
   * "not run". Default `DEFAULT_MAX_TOOL_CALLS_PER_REPLY` (8).
   */
  maxToolCallsPerReply?: number;
}

export interface ModelActivityDependencies {
  /** The model (activities/model/chat-model.ts). */
  chatModel: ChatModel;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
  modelDefaults: ModelDefaults;
  /** For native tool calling in runs opened before their specs were stored (no `toolSpecs` in the input): the schemas by name. */
  tools: ToolRegistry;
  /** Prices per model (REACT_AGENT_MODEL_PRICES, read by the worker): a call of a priced model returns its cost with its usage. */
  prices?: ModelPrices;
  /** Prompt and completion text in the call's span (REACT_AGENT_TRACE_CONTENT), truncated; default none. */
  traceContent?: TraceContentOptions;
  /** The worker's secrets, taken out of the reply (content, reasoning, tool calls) before it is parsed or stored: a server may echo them. Default: URL credentials only. */
  redactor?: SecretRedactor;
  /**
   * The worker's live text server (issue 32, REACT_AGENT_LIVE_TEXT_LISTEN): each attempt's text
   * pushed to watchers as it streams, its URL in the first heartbeat. Default none (the heartbeat
   * details' tail alone).
   */
  liveText?: LiveTextChannels;
  /**
   * The models' shared limits (`REACT_AGENT_MODEL_LIMITS`, issue 33): each call of a limited model
   * books its tokens before its request and settles its usage after. Default: none (nothing asked).
   */
  modelLimits?: ModelLimitGate;
}

/** An attempt made ready to send: its prompt, protocol and tools, and its place in the model's shared limit. */
interface PreparedCall {
  prompt: PreparedPrompt;
  protocol: Protocol;
  nativeTools: ToolSpec[] | undefined;
  ticket: ModelLimitTicket | undefined;
}

/**
 * The model activity: appends the previous turn's observations, streams one reply from the
 * chat model (heartbeating with the streamed text's tail; the model gives up when no first chunk
 * comes within the first-token limit or the stream stalls past the heartbeat timeout), stores the
 * reply with its reasoning, and returns references plus the parsed turn.
 */
export function createCallModel(dependencies: ModelActivityDependencies) {
  const { chatModel, store, tokenCounter, modelDefaults, tools, prices, traceContent, liveText, modelLimits } =
    dependencies;
  const redactor = dependencies.redactor ?? SecretRedactor.none;

  return async function callModel(received: CallModelInput): Promise<CallModelOutput> {
    const input = withWorkflowId(received);
    // Each attempt is counted and timed (react_agent_model_* metrics) once its request is sent.
    const metrics = new ModelCallMetrics(Context.current(), input.model.model);
    // Each attempt in a `chat <model>` span (a no-op unless the worker traces: OTEL_EXPORTER_OTLP_*).
    return inModelCallSpan(input.model.model, { 'react_agent.model_call': input.modelCall }, async (span) => {
      try {
        return await callModelOnce(input, metrics, span);
      } catch (error) {
        metrics.failed(error);
        throw error;
      }
    });
  };

  /**
   * The specs of the run's tools: those stored when it started (fixed for its life, whatever this
   * worker offers now), else, for a run opened before they were stored, the registry's by name.
   */
  async function runToolSpecs(input: CallModelInput): Promise<ToolSpec[]> {
    if (input.toolSpecs === undefined) return tools.specs(input.tools ?? []);
    const stored = await loadToolSpecs(store, input.toolSpecs);
    if (input.tools === undefined) return stored;
    const byName = new Map(stored.map((spec) => [spec.name, spec]));
    return input.tools.flatMap((name) => byName.get(name) ?? []);
  }

  /**
   * One attempt: the prompt prepared (its new messages stored before the model is called), one
   * reply streamed (heartbeating with its tail), redacted before anything parses or stores it,
   * then recorded (the reply and its manifest side by side) and parsed.
   */
  async function callModelOnce(
    input: CallModelInputOfRun,
    metrics: ModelCallMetrics,
    span: Span,
  ): Promise<CallModelOutput> {
    const context = Context.current();
    const protocol = protocolByName(input.protocol);
    const prompt = await preparePrompt(store, tokenCounter, input.conversation, input.append);
    const runTools = protocol.nativeTools ? await runToolSpecs(input) : [];
    const nativeTools = runTools.length ? runTools : undefined;
    setModelInputContent(span, prompt.messages, traceContent);
    // A limited model: the call's tokens booked in the shared budget, waited for if need be
    // (heartbeating `waitingForModelLimit`, which follow reads while it looks for the live text's URL).
    const ticket = await waitForModelLimit(
      modelLimits,
      {
        model: input.model.model,
        promptTokens: prompt.estimatedPromptTokens,
        ...(input.model.maxOutputTokens !== undefined ? { maxOutputTokens: input.model.maxOutputTokens } : {}),
        ...(input.model.modelShare !== undefined ? { share: input.model.modelShare } : {}),
      },
      context,
    );
    // The attempt's live text (issue 32): its URL goes out in this heartbeat, which the SDK sends
    // at once when it is the attempt's first (the throttle holds back only later ones: after a wait
    // for the model's limit it goes out at the next throttle tick), so a watcher can connect before
    // the first token; the text never enters history. The run's stream on this worker shows it too
    // (the URL beside it), so a watcher of the run already reading it is told without asking Temporal.
    const { workflowExecution, activityId, attempt } = context.info;
    const run = workflowExecution?.workflowId && workflowExecution.runId ? workflowExecution : undefined;
    const live = liveText?.open(
      input.modelCall,
      run && { workflowId: run.workflowId as string, runId: run.runId as string, activityId, attempt },
    );
    const call = { modelCall: input.modelCall, ...(live ? { liveText: live.pointer } : {}) };
    context.heartbeat(
      heartbeatOf(
        { chunks: 0, contentCharacters: 0, reasoningCharacters: 0, waitingForFirstChunkMs: 0 },
        new StreamedText(),
        call,
      ),
    );
    try {
      const output = await streamAndRecord(input, { prompt, protocol, nativeTools, ticket }, metrics, span, call, live);
      live?.end('completed');
      return output;
    } catch (error) {
      live?.end('failed');
      throw error;
    }
  }

  async function streamAndRecord(
    input: CallModelInputOfRun,
    { prompt, protocol, nativeTools, ticket }: PreparedCall,
    metrics: ModelCallMetrics,
    span: Span,
    call: CallOfHeartbeat,
    live: LiveTextSink | undefined,
  ): Promise<CallModelOutput> {
    const context = Context.current();

    // The text as it streams, bounded, for whoever watches the call (`react-agent follow`, the
    // Web UI's pending activity): it rides in the heartbeat details, never in history.
    const streamed = new StreamedText();
    metrics.requestSent();
    const answered = await chatModel
      .chat(
        modelRequest(input, protocol, prompt.messages, nativeTools, modelDefaults),
        chatControls({
          signal: context.cancellationSignal,
          heartbeatTimeoutMs: context.info.heartbeatTimeoutMs,
          firstTokenSeconds: modelDefaults.firstTokenSeconds,
          stallSeconds: modelDefaults.stallSeconds,
          onDelta: (delta) => {
            const piece = streamed.add(delta);
            if (piece && live) live.add(piece.kind, redactor.redact(piece.text));
          },
          onProgress: (progress) => {
            if (progress.chunks > 0) metrics.chunkArrived();
            context.heartbeat(heartbeatOf(progress, streamed, call));
          },
        }),
      )
      .catch(async (error: unknown) => {
        await settleFailedCall(modelLimits, ticket, error, input.model.model, context);
        throw error;
      });
    // A server may echo a secret: out before anything parses, stores or traces the reply.
    const reply = redactor.redactValue(answered);
    const usage = replyUsage(reply, prompt.estimatedPromptTokens, tokenCounter, prices, input.model.model);
    await settleAnsweredCall(modelLimits, ticket, usage);
    metrics.succeeded(
      {
        prompt: usage.promptTokens,
        completion: usage.completionTokens,
        reasoning: usage.reasoningTokens,
        cached: usage.cachedPromptTokens,
        cache_write: usage.cacheWriteTokens,
      },
      usage.costUsd,
      usage.cacheSavedUsd,
    );
    setModelResponse(span, {
      model: input.model.model,
      finishReason: reply.finishReason,
      inputTokens: usage.promptTokens,
      outputTokens: usage.completionTokens,
    });
    setModelOutputContent(span, reply, traceContent);

    const cleaned = protocol.cleanOutput(reply.content);
    const assistant = assistantMessageOf(
      reply,
      cleaned,
      modelDefaults.maxToolCallsPerReply ?? DEFAULT_MAX_TOOL_CALLS_PER_REPLY,
    );
    const recorded = await recordReply(store, tokenCounter, prompt, assistant);
    const turn = protocol.parse(
      { content: cleaned, toolCalls: reply.toolCalls },
      input.modelCall,
      modelDefaults.maxToolCallsPerReply,
    );
    return callModelOutput(
      recorded,
      withReasoningThought(turn, reply.reasoning),
      usage,
      reply.finishReason,
      prompt.estimatedPromptTokens,
    );
  }
}
