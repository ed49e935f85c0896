/** Chat roles as the OpenAI chat API knows them. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call as the OpenAI chat API carries it on an assistant message. */
export interface NativeToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: a JSON string (possibly malformed). */
  arguments: string;
}

/**
 * What a model API needs back with an assistant message that the project's own fields do not
 * hold (issue 31): Anthropic's thinking blocks with their signatures, OpenAI Responses' reasoning
 * items with their encrypted content. Opaque to everything but the API that wrote it, which sends
 * it back on the next call (and only that API: `api` names it). It lives in the transcript store
 * with the message, by reference, never in workflow history.
 */
export interface ProviderState {
  /** The API that wrote it (`anthropic-messages`, `openai-responses`). */
  api: string;
  /** The API's own items, as it sent them. */
  items: unknown[];
}

/** A chat message as stored in the transcript store and sent to the model. */
export interface ChatMessage {
  role: Role;
  content: string;
  /**
   * The model's reasoning, for an assistant message whose server streams it apart from the
   * content (`reasoning_content` or `reasoning`). Kept in the transcript and in results (as the
   * `<think>` part), never sent back to a server.
   */
  reasoning?: string;
  /** Native tool calls of an assistant message. */
  toolCalls?: NativeToolCall[];
  /** For an assistant message: what its API needs sent back with it ({@link ProviderState}). */
  provider?: ProviderState;
  /** For a `tool` message: the id of the call it answers. */
  toolCallId?: string;
}

/**
 * A piece of a message that the workflow asks an activity to compose: literal text the
 * workflow knows (small: tags, notes), or the content of a stored blob it only has a
 * reference to (a tool's output). The workflow never holds large content itself.
 */
export type MessagePart = { text: string } | { ref: string };

/** A message the workflow wants appended to the conversation, composed from parts. */
export interface PendingMessage {
  role: Role;
  parts: MessagePart[];
  /** For a `tool` message: the id of the call it answers. */
  toolCallId?: string;
}

/** Adds text to the last pending user message, or appends a new user message (keeps roles alternating where a protocol needs it). */
export function withUserText(pending: PendingMessage[], text: string): PendingMessage[] {
  const last = pending.at(-1);
  if (last && last.role === 'user')
    return [...pending.slice(0, -1), { ...last, parts: [...last.parts, { text: `\n\n${text}` }] }];
  return [...pending, { role: 'user', parts: [{ text }] }];
}

/** What history carries for a stored text: where it is, and enough to read it in the Web UI. */
export interface StoredText {
  /** Content address in the transcript store (`sha256:<hex>`). */
  ref: string;
  /** A short single-line preview. */
  preview: string;
  /** Length of the whole text in characters. */
  characters: number;
}

/** Token counts reported by the model for one call. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /**
   * What the calls cost in USD, at the prices the worker was given (`REACT_AGENT_MODEL_PRICES`,
   * src/domain/model-prices.ts). Absent when none of the calls' models has a price (and in
   * histories recorded before prices existed); the calls of a model without a price add nothing.
   */
  costUsd?: number;
  /**
   * Of `promptTokens`, those the server read from its prompt cache (Chat Completions'
   * `cached_tokens`, Anthropic's `cache_read_input_tokens`): the cache hit rate is this over
   * `promptTokens`. Absent when no call reported it (and in histories recorded before issue 31).
   */
  cachedPromptTokens?: number;
  /** Of `promptTokens`, those written to the server's prompt cache (Anthropic). Absent when no call reported it. */
  cacheWriteTokens?: number;
  /**
   * What prompt caching saved in USD (src/domain/model-prices.ts `callCacheSavedUsd`): the calls'
   * cost with every prompt token at the model's `input` price and no cache write, less their
   * cost as charged. Negative when cache writes cost more than cache reads saved. Absent when no
   * priced call reported cached or cache-write tokens (and in histories recorded before it).
   */
  cacheSavedUsd?: number;
}

export const ZERO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

export function addUsage(left: TokenUsage, right: TokenUsage): TokenUsage {
  return {
    promptTokens: left.promptTokens + right.promptTokens,
    completionTokens: left.completionTokens + right.completionTokens,
    totalTokens: left.totalTokens + right.totalTokens,
    ...(left.costUsd !== undefined || right.costUsd !== undefined
      ? { costUsd: (left.costUsd ?? 0) + (right.costUsd ?? 0) }
      : {}),
    ...(left.cachedPromptTokens !== undefined || right.cachedPromptTokens !== undefined
      ? { cachedPromptTokens: (left.cachedPromptTokens ?? 0) + (right.cachedPromptTokens ?? 0) }
      : {}),
    ...(left.cacheWriteTokens !== undefined || right.cacheWriteTokens !== undefined
      ? { cacheWriteTokens: (left.cacheWriteTokens ?? 0) + (right.cacheWriteTokens ?? 0) }
      : {}),
    ...(left.cacheSavedUsd !== undefined || right.cacheSavedUsd !== undefined
      ? { cacheSavedUsd: (left.cacheSavedUsd ?? 0) + (right.cacheSavedUsd ?? 0) }
      : {}),
  };
}
