import type { ContextWindow } from '../../src/core/context-window';
import type { ChatMessage, NativeToolCall, ProviderState } from '../../src/core/messages';
import type { ToolSpec } from '../../src/core/tool-spec';

/**
 * The one seam between the agent and a model API, in the project's own terms: messages, tools,
 * stop sequences and sampling in; one streamed reply with its usage, finish reason and reasoning
 * out. Every caller — the model activity, compression's summaries, the judge, the visit tool's
 * page summariser — goes through it, so streaming, the first-token and stall limits, heartbeats
 * and the classification of failures live in one implementation per API.
 *
 * `openai-chat-model.ts` implements it for OpenAI-compatible chat completions (OpenAI, vLLM,
 * llama-server, Ollama, gateways), `openai-responses-model.ts` for OpenAI's Responses API and
 * `anthropic-messages-model.ts` for Anthropic's Messages API (issue 31; `chat-model-factory.ts`
 * builds the one configured). Each maps messages and tools to its request, reads its own stream
 * into a {@link ChatReply} through `streamed-reply.ts`, and throws the same typed failures
 * (`ApplicationFailure`s of `src/core/failure-types.ts`, see docs/architecture.md).
 */
export interface ChatModel {
  /**
   * Sends one request and reads its streamed reply to the end.
   *
   * @throws ApplicationFailure typed by what went wrong (`ReactAgent.Model.*`: unreachable, rate
   *   limited, server error, request rejected, context length exceeded, first-token timeout, bad
   *   response), naming the setting to fix; the abort reason when `controls.signal` aborts.
   */
  chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply>;

  /** The model's context window as its server says it; undefined when the server does not say. Never throws. */
  contextWindow(model: string): Promise<ContextWindow | undefined>;
}

/** Sampling settings; an absent one is left to the server. */
export interface ChatSampling {
  temperature?: number;
  topP?: number;
  /** Longest reply, in tokens. */
  maxOutputTokens?: number;
  presencePenalty?: number;
}

/** A tool as the model sees it: its name, what it does, and the JSON Schema of its arguments. */
export type ChatTool = Pick<ToolSpec, 'name' | 'description' | 'parameters'>;

/** One request to the model. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** Tools the model may call natively; none when absent or empty. */
  tools?: ChatTool[];
  /** With `tools`: `none` forbids calling them (the final answer call). Default `auto`. */
  toolChoice?: 'auto' | 'none';
  /** Stop sequences. */
  stop?: string[];
  sampling?: ChatSampling;
  /** Labels for the server's logs (sent as request headers), e.g. the workflow id and the call's number. */
  labels?: Record<string, string>;
}

/** Tokens a reply used, as the server reported them. */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the server's cache, when it says (part of `promptTokens`). */
  cachedPromptTokens?: number;
  /** Prompt tokens written to the server's cache by this call, when it says (Anthropic; part of `promptTokens`). */
  cacheWriteTokens?: number;
  /** Completion tokens spent on reasoning, when it says. */
  reasoningTokens?: number;
}

/** A whole reply. */
export interface ChatReply {
  /** The text, exactly as streamed (stop sequences already cut by the server). */
  content: string;
  /** Reasoning the server streamed apart from the content ('' when none). */
  reasoning: string;
  toolCalls: NativeToolCall[];
  /** Why the reply ended (`stop`, `length`, `tool_calls`, …). */
  finishReason: string;
  /** What the server reported; absent when it reported nothing. */
  usage?: ChatUsage;
  /** How many stream chunks came. */
  chunks: number;
  /** What the API needs sent back with this reply on the next call (thinking blocks, reasoning items); stored with the message. */
  provider?: ProviderState;
}

/** A piece of the reply as it streams: reasoning, content, or a native tool call's name or arguments. */
export interface ChatDelta {
  kind: 'reasoning' | 'content' | 'tool-name' | 'tool-arguments';
  text: string;
  /** For tool deltas: which call of the reply (0-based). */
  toolCall?: number;
}

/** How far a streaming reply got, for heartbeats. */
export interface ChatProgress {
  chunks: number;
  contentCharacters: number;
  reasoningCharacters: number;
  /** While no chunk came: milliseconds since the request was sent. */
  waitingForFirstChunkMs?: number;
}

/** Cancellation, liveness and limits of one call. */
export interface ChatControls {
  /** Aborts the request (the activity's cancellation). */
  signal: AbortSignal;
  /** Called with every piece of the reply as it arrives. */
  onDelta?: (delta: ChatDelta) => void;
  /**
   * Called after a chunk (at most every `progressIntervalMs`, and once more after the last chunk if
   * that one was held back) and every few seconds while the request is open: the caller heartbeats.
   */
  onProgress?: (progress: ChatProgress) => void;
  /**
   * Shortest time between two `onProgress` calls made for chunks, in milliseconds. Default
   * {@link DEFAULT_PROGRESS_INTERVAL_MS}; 0 calls it after every chunk. The calls made every few
   * seconds to keep the request alive are not held back.
   */
  progressIntervalMs?: number;
  /** Longest wait for the first chunk, in milliseconds. Default {@link DEFAULT_FIRST_CHUNK_LIMIT_MS}. */
  firstChunkLimitMs?: number;
  /** Longest gap between two chunks once the reply streams, in milliseconds. Default {@link DEFAULT_STALL_LIMIT_MS}. */
  stallLimitMs?: number;
  /** Time between the heartbeats (`onProgress`) while the request is open, in milliseconds. Default: a third of `stallLimitMs`, at most 5 s (`heartbeatIntervalFor`). */
  heartbeatIntervalMs?: number;
}

/**
 * {@link ChatControls.progressIntervalMs} when not given: 250 ms. A heartbeat per chunk redacted and
 * encoded details hundreds of times a second on a fast stream, where the SDK sends them to Temporal
 * at most every few seconds (its throttle); the direct live text does not wait for heartbeats.
 */
export const DEFAULT_PROGRESS_INTERVAL_MS = 250;

/** {@link ChatControls.firstChunkLimitMs} when not given: 300 s (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS's default). */
export const DEFAULT_FIRST_CHUNK_LIMIT_MS = 300_000;

/** {@link ChatControls.stallLimitMs} when not given: 60 s (the model activity's default heartbeat timeout). */
export const DEFAULT_STALL_LIMIT_MS = 60_000;
