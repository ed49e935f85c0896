import { Context } from '@temporalio/activity';
import type { Span } from '@opentelemetry/api';
import type { CallModelInput, CallModelOutput } from '../src/core/activity-contracts';
import { appendToStreamTail, type ModelCallHeartbeat, type StreamTail } from '../src/domain/model-stream-text';
import type { ChatMessage } from '../src/core/messages';
import { modelCallCostUsd, type ModelPrices } from '../src/domain/model-prices';
import { SecretRedactor } from '../src/domain/secret-redaction';
import { DEFAULT_MAX_TOOL_CALLS_PER_REPLY, keptToolCalls, protocolByName } from '../src/core/protocols';
import { extractThought } from '../src/core/protocols/deep-research-protocol';
import { preview } from '../src/core/text';
import type { ToolSpec } from '../src/core/tool-spec';
import { totalOfCounts } from '../src/domain/message-token-counts';
import { composeMessage, loadMessages, loadToolSpecs, messageReference, putMessage } from '../src/storage/conversation';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { ModelCallMetrics } from './metrics/model-call-metrics';
import { chatControls } from './model/chat-controls';
import type { ChatDelta, ChatModel, ChatProgress } from './model/chat-model';
import { MODEL_CALL_LABEL, WORKFLOW_ID_LABEL } from './model/chat-request-labels';
import { carriedConversationCounts, messageCounts, putCountedConversation } from './counted-conversation';
import { countMessageTokens, type TokenCounter } from './token-counter';
import type { ToolRegistry } from './tools/tool-registry';
import { inModelCallSpan, setModelResponse, truncatedContent, type TraceContentOptions } from './tracing/agent-spans';

/** Sampling defaults the worker applies when a run does not set them. */
export interface ModelDefaults {
  /** Model name (REACT_AGENT_MODEL). */
  model: string;
  temperature: number;
  topP: number;
  maxOutputTokens: number;
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
}

/** Reasoning shortened for history the way the protocols shorten a `<think>` thought. */
function thoughtOfReasoning(reasoning: string): string {
  return extractThought(`<think>${reasoning}</think>`);
}

/**
 * The last part of what a reply streamed — reasoning, content, native tool calls, in the order
 * they came, a new line where the kind changes and for each further tool call — bounded.
 */
class StreamedText {
  tail: StreamTail = { text: '', characters: 0 };
  private lastKind: 'reasoning' | 'content' | 'tool' | undefined;
  private readonly namedCalls = new Set<number>();

  add(delta: ChatDelta): void {
    if (!delta.text) return;
    const kind = delta.kind === 'tool-name' || delta.kind === 'tool-arguments' ? 'tool' : delta.kind;
    let separator = this.lastKind !== undefined && this.lastKind !== kind ? '\n' : '';
    if (delta.kind === 'tool-name' && !this.namedCalls.has(delta.toolCall ?? 0)) {
      // Each native tool call on a line of its own: its name, then its arguments as they come.
      if (this.lastKind === 'tool') separator = '\n';
      this.namedCalls.add(delta.toolCall ?? 0);
    }
    this.lastKind = kind;
    this.tail = appendToStreamTail(this.tail, separator + delta.text);
  }
}

/** A model call's heartbeat details: how far it got, and the streamed text's tail once text flows. */
function heartbeatOf(progress: ChatProgress, streamed: StreamedText): ModelCallHeartbeat {
  return {
    chunks: progress.chunks,
    characters: progress.contentCharacters,
    ...(progress.reasoningCharacters ? { reasoningCharacters: progress.reasoningCharacters } : {}),
    ...(progress.waitingForFirstChunkMs !== undefined ? { waitingForFirstTokenSeconds: Math.round(progress.waitingForFirstChunkMs / 1000) } : {}),
    ...(streamed.tail.characters ? { streamed: streamed.tail.text, streamedCharacters: streamed.tail.characters } : {}),
  };
}

/** A model call's prompt: its messages with their references and carried counts, and the messages it adds to the stored conversation. */
interface Prompt {
  references: string[];
  messages: ChatMessage[];
  known: Array<number | undefined>;
  /** New since the stored conversation, with the references the prompt names them by: stored before the model is called. */
  added: StoredMessage[];
}

/** A message with the reference it is (to be) stored under. */
interface StoredMessage {
  message: ChatMessage;
  reference: string;
}

/**
 * Appends messages to a conversation, a user message that follows a user message joined to it
 * (chat templates want user and assistant turns to alternate): the request for the final answer
 * after a compression that took the last observations in, or a message injected then. The
 * question (the second message) is never joined to. The carried counts follow the references; a
 * joined or new message has none (it is counted). The new messages' references are known before
 * they are stored (content addresses), so they are stored while the prompt is counted.
 */
function appendAlternating(conversation: { references: string[]; messages: ChatMessage[]; known: Array<number | undefined> }, additions: ChatMessage[]): Prompt {
  const { references, messages, known } = conversation;
  const [first, ...rest] = additions;
  const last = messages.at(-1);
  const joinLast = first?.role === 'user' && references.length > 2 && last?.role === 'user';
  const added = (joinLast ? [{ ...last, content: `${last.content}\n\n${first.content}` }, ...rest] : additions).map((message) => ({ message, reference: messageReference(message) }));
  const kept = joinLast ? references.length - 1 : references.length;
  return {
    references: [...references.slice(0, kept), ...added.map(({ reference }) => reference)],
    messages: [...messages.slice(0, kept), ...added.map(({ message }) => message)],
    known: [...known.slice(0, kept), ...added.map(() => undefined)],
    added,
  };
}

/** Stores messages, checking that the store named each by the reference a manifest already names it by ({@link messageReference}). */
async function storeMessages(store: TranscriptStore, messages: StoredMessage[]): Promise<void> {
  await Promise.all(
    messages.map(async ({ message, reference: expected }) => {
      const stored = await putMessage(store, message);
      if (stored !== expected)
        throw new Error(`The transcript store named a message ${stored}, not its content address ${expected}: a TranscriptStore must name a text by the SHA-256 of its UTF-8 bytes.`);
    }),
  );
}

/**
 * The model activity: appends the previous turn's observations, streams one reply from the
 * chat model (heartbeating with the streamed text's tail; the model gives up when no first chunk
 * comes within the first-token limit or the stream stalls past the heartbeat timeout), stores the
 * reply with its reasoning, and returns references plus the parsed turn.
 */
export function createCallModel(dependencies: ModelActivityDependencies) {
  const { chatModel, store, tokenCounter, modelDefaults, tools, prices, traceContent } = dependencies;
  const redactor = dependencies.redactor ?? SecretRedactor.none;

  return async function callModel(input: CallModelInput): Promise<CallModelOutput> {
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
    if (input.toolSpecs === undefined) return tools.specs(input.tools);
    const stored = await loadToolSpecs(store, input.toolSpecs);
    const byName = new Map(stored.map((spec) => [spec.name, spec]));
    return input.tools.flatMap((name) => byName.get(name) ?? []);
  }

  async function callModelOnce(input: CallModelInput, metrics: ModelCallMetrics, span: Span): Promise<CallModelOutput> {
    const context = Context.current();
    const protocol = protocolByName(input.protocol);
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    // Token counts carried forward (issue 21): only the messages new since the last call are counted.
    const carried = await carriedConversationCounts(store, input.conversation, tokenCounter);
    const prompt = appendAlternating({ ...carried, messages: await loadMessages(store, carried.references) }, appended);
    const { references, messages } = prompt;
    // The new messages are stored while they are counted; the model is called only once they are stored.
    const storingAdded = storeMessages(store, prompt.added);
    storingAdded.catch(() => undefined); // awaited below, before the model call
    const counts = messageCounts(messages, prompt.known, tokenCounter);
    const estimatedPromptTokens = totalOfCounts(counts);
    await storingAdded;
    const nativeTools = protocol.nativeTools && input.tools.length ? await runToolSpecs(input) : undefined;
    if (traceContent) span.setAttribute('gen_ai.input.messages', truncatedContent(JSON.stringify(messages.map(({ role, content }) => ({ role, content }))), traceContent.maxCharacters));

    // The text as it streams, bounded, for whoever watches the call (`react-agent follow`, the
    // Web UI's pending activity): it rides in the heartbeat details, never in history.
    const streamed = new StreamedText();
    metrics.requestSent();
    const answered = await chatModel.chat(
      {
        model: input.model.model,
        messages,
        ...(protocol.stop.length ? { stop: protocol.stop } : {}),
        ...(nativeTools ? { tools: nativeTools, toolChoice: input.finalAnswer ? 'none' : 'auto' } : {}),
        sampling: {
          temperature: input.model.temperature ?? modelDefaults.temperature,
          topP: input.model.topP ?? modelDefaults.topP,
          maxOutputTokens: input.model.maxOutputTokens ?? modelDefaults.maxOutputTokens,
          ...(input.model.presencePenalty !== undefined ? { presencePenalty: input.model.presencePenalty } : {}),
        },
        labels: { [WORKFLOW_ID_LABEL]: input.workflowId, [MODEL_CALL_LABEL]: String(input.modelCall) },
      },
      chatControls({
        signal: context.cancellationSignal,
        heartbeatTimeoutMs: context.info.heartbeatTimeoutMs,
        firstTokenSeconds: modelDefaults.firstTokenSeconds,
        stallSeconds: modelDefaults.stallSeconds,
        onDelta: (delta) => streamed.add(delta),
        onProgress: (progress) => {
          if (progress.chunks > 0) metrics.chunkArrived();
          context.heartbeat(heartbeatOf(progress, streamed));
        },
      }),
    );
    const reply = redactor.redactValue(answered);
    const { content, reasoning, toolCalls: nativeCalls, finishReason } = reply;
    const cleaned = protocol.cleanOutput(content);
    // A server that reports no usage: the prompt is our estimate of it (already counted, not counted again).
    const promptTokens = reply.usage?.promptTokens ?? estimatedPromptTokens;
    const completionTokens = reply.usage?.completionTokens ?? tokenCounter.count(reasoning + content + nativeCalls.map((call) => call.name + call.arguments).join(''));
    const cachedPromptTokens = reply.usage?.cachedPromptTokens;
    // Absent when the model has no price (src/domain/model-prices.ts).
    const costUsd = modelCallCostUsd(prices, input.model.model, { promptTokens, completionTokens, ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}) });
    metrics.succeeded(
      {
        prompt: promptTokens,
        completion: completionTokens,
        reasoning: reply.usage?.reasoningTokens,
        cached: cachedPromptTokens,
      },
      costUsd,
    );
    setModelResponse(span, { model: input.model.model, finishReason, inputTokens: promptTokens, outputTokens: completionTokens });
    if (traceContent)
      span.setAttribute(
        'gen_ai.output.messages',
        truncatedContent(JSON.stringify([{ role: 'assistant', content, ...(reasoning ? { reasoning } : {}), ...(nativeCalls.length ? { tool_calls: nativeCalls } : {}) }]), traceContent.maxCharacters),
      );
    // Native calls past the first one over the cap are left out of the stored reply; that one's answer says so (src/core/protocols/tool-call-cap.ts).
    const storedCalls = keptToolCalls(nativeCalls, modelDefaults.maxToolCallsPerReply ?? DEFAULT_MAX_TOOL_CALLS_PER_REPLY);
    const assistant: ChatMessage = { role: 'assistant', content: cleaned, ...(reasoning ? { reasoning } : {}), ...(storedCalls.length ? { toolCalls: storedCalls } : {}) };
    const assistantReference = messageReference(assistant);
    // The reply and the manifest naming it are written side by side: both are durable before the attempt completes.
    const [conversation] = await Promise.all([
      putCountedConversation(store, [...references, assistantReference], [...counts, countMessageTokens(assistant, tokenCounter)], tokenCounter),
      storeMessages(store, [{ message: assistant, reference: assistantReference }]),
    ]);
    const turn = protocol.parse({ content: cleaned, toolCalls: nativeCalls }, input.modelCall, modelDefaults.maxToolCallsPerReply);
    return {
      conversation,
      assistant: {
        ref: assistantReference,
        preview: preview(cleaned || storedCalls.map((call) => `${call.name}(${call.arguments})`).join(' ') || (reasoning ? `(reasoning) ${reasoning}` : '')),
        characters: cleaned.length,
      },
      // A server that streams the reasoning apart leaves the protocol's own thought empty.
      turn: turn.thought || !reasoning ? turn : { ...turn, thought: thoughtOfReasoning(reasoning) },
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, ...(costUsd !== undefined ? { costUsd } : {}) },
      contextTokens: promptTokens + completionTokens,
      finishReason,
      estimatedPromptTokens,
    };
  }
}
