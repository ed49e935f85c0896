import type { CallModelOutput } from '../../src/core/activity-contracts';
import type { ChatMessage, StoredText, TokenUsage } from '../../src/core/messages';
import { keptToolCalls, type ParsedTurn } from '../../src/core/protocols';
import { extractThought } from '../../src/core/protocols/deep-research-protocol';
import { preview } from '../../src/core/text';
import {
  modelCallCacheSavedUsd,
  modelCallCostUsd,
  type ModelPrices,
  type PricedTokens,
} from '../../src/domain/model-prices';
import { messageReference } from '../../src/storage/conversation';
import type { TranscriptStore } from '../../src/storage/transcript-store';
import { putCountedConversation } from '../counted-conversation';
import type { ChatReply } from '../model/chat-model';
import { countMessageTokens, type TokenCounter } from '../token-counter';
import { storeMessages, type PreparedPrompt } from './prompt';

/** What a reply used: the server's counts, else our own; and, for a priced model, what it cost. */
export interface ReplyUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the server's cache, when it says. */
  cachedPromptTokens?: number;
  /** Prompt tokens written to the server's cache, when it says (Anthropic). */
  cacheWriteTokens?: number;
  /** Completion tokens spent on reasoning, when the server says. */
  reasoningTokens?: number;
  /** Absent when the model has no price (src/domain/model-prices.ts). */
  costUsd?: number;
  /** What caching saved (src/domain/model-prices.ts `callCacheSavedUsd`); absent when the model has no price or the server reported no cache tokens. */
  cacheSavedUsd?: number;
}

/**
 * A reply's usage. A server that reports none: the prompt is our estimate of it (already counted,
 * not counted again), the completion our count of its reasoning, content and native tool calls.
 */
export function replyUsage(
  reply: ChatReply,
  estimatedPromptTokens: number,
  tokenCounter: TokenCounter,
  prices: ModelPrices | undefined,
  model: string,
): ReplyUsage {
  const promptTokens = reply.usage?.promptTokens ?? estimatedPromptTokens;
  const completionTokens =
    reply.usage?.completionTokens ??
    tokenCounter.count(
      reply.reasoning + reply.content + reply.toolCalls.map((call) => call.name + call.arguments).join(''),
    );
  const cachedPromptTokens = reply.usage?.cachedPromptTokens;
  const cacheWriteTokens = reply.usage?.cacheWriteTokens;
  const reasoningTokens = reply.usage?.reasoningTokens;
  const priced: PricedTokens = {
    promptTokens,
    completionTokens,
    ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
  };
  const costUsd = modelCallCostUsd(prices, model, priced);
  const cacheSavedUsd = modelCallCacheSavedUsd(prices, model, priced);
  return {
    promptTokens,
    completionTokens,
    ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
    ...(cacheSavedUsd !== undefined ? { cacheSavedUsd } : {}),
  };
}

/** A reply's usage as a run adds it up. */
export function tokenUsageOf(usage: ReplyUsage): TokenUsage {
  const { promptTokens, completionTokens, costUsd, cachedPromptTokens, cacheWriteTokens, cacheSavedUsd } = usage;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...(costUsd !== undefined ? { costUsd } : {}),
    ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
    ...(cacheSavedUsd !== undefined ? { cacheSavedUsd } : {}),
  };
}

/**
 * The reply as the conversation stores it: the protocol's cleaned content, the reasoning, what its
 * API needs sent back with it (thinking blocks, reasoning items: by reference, never in history), and the
 * native tool calls up to the cap — those past the first one over it are left out, and that one's
 * answer says so (src/core/protocols/tool-call-cap.ts).
 */
export function assistantMessageOf(
  reply: Pick<ChatReply, 'reasoning' | 'toolCalls' | 'provider'>,
  cleaned: string,
  maxToolCallsPerReply: number,
): ChatMessage {
  const storedCalls = keptToolCalls(reply.toolCalls, maxToolCallsPerReply);
  return {
    role: 'assistant',
    content: cleaned,
    ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
    ...(storedCalls.length ? { toolCalls: storedCalls } : {}),
    ...(reply.provider ? { provider: reply.provider } : {}),
  };
}

/** The stored reply's one-line preview: its content, else its tool calls, else its reasoning. */
export function assistantPreview(assistant: ChatMessage): string {
  const calls = (assistant.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`).join(' ');
  return preview(assistant.content || calls || (assistant.reasoning ? `(reasoning) ${assistant.reasoning}` : ''));
}

/** The parsed turn; when its protocol found no thought (a server that streams the reasoning apart), the reasoning's, shortened as the protocols shorten a `<think>` thought. */
export function withReasoningThought(turn: ParsedTurn, reasoning: string): ParsedTurn {
  return turn.thought || !reasoning ? turn : { ...turn, thought: extractThought(`<think>${reasoning}</think>`) };
}

/** The stored reply and the conversation that ends with it. */
export interface RecordedReply {
  conversation: string;
  assistant: StoredText;
}

/**
 * Stores the reply and the manifest of the prompt's conversation with it appended (each message's
 * count carried, the reply's counted), side by side: both are durable before the attempt completes.
 */
export async function recordReply(
  store: TranscriptStore,
  tokenCounter: TokenCounter,
  prompt: PreparedPrompt,
  assistant: ChatMessage,
): Promise<RecordedReply> {
  const reference = messageReference(assistant);
  const [conversation] = await Promise.all([
    putCountedConversation(
      store,
      [...prompt.references, reference],
      [...prompt.counts, countMessageTokens(assistant, tokenCounter)],
      tokenCounter,
    ),
    storeMessages(store, [{ message: assistant, reference }]),
  ]);
  return {
    conversation,
    assistant: { ref: reference, preview: assistantPreview(assistant), characters: assistant.content.length },
  };
}

/** The model activity's output for a recorded reply, its parsed turn and its usage. */
export function callModelOutput(
  recorded: RecordedReply,
  turn: ParsedTurn,
  usage: ReplyUsage,
  finishReason: string,
  estimatedPromptTokens: number,
): CallModelOutput {
  return {
    ...recorded,
    turn,
    usage: tokenUsageOf(usage),
    contextTokens: usage.promptTokens + usage.completionTokens,
    finishReason,
    estimatedPromptTokens,
  };
}
