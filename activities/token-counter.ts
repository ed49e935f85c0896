import { get_encoding, type Tiktoken } from 'tiktoken';
import type { ChatMessage } from '../src/core/messages';

/** Counts tokens of text for budget estimates (the model's own usage is exact; this is for tool output). */
export interface TokenCounter {
  count(text: string): number;
}

let sharedEncoder: Tiktoken | undefined;

/**
 * A counter over tiktoken's o200k_base encoding, loaded once per worker process. It is an
 * estimate for models with other tokenizers; the workflow calibrates it with the ratio the
 * model server last reported (see src/core/token-calibration.ts).
 */
export function createTiktokenCounter(): TokenCounter {
  return {
    count(text: string): number {
      sharedEncoder ??= get_encoding('o200k_base');
      return sharedEncoder.encode_ordinary(text).length;
    },
  };
}

/** A cheap estimate (4 characters a token), for tests and when tiktoken is not wanted. */
export const characterEstimateCounter: TokenCounter = { count: (text) => Math.ceil(text.length / 4) };

/** Tokens a chat template adds around each message, in our estimate. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Our estimate of a conversation's tokens: every message's content and native tool calls, plus a
 * little per message. The model activity and compression both count with this, so the ratio of
 * the server's prompt tokens to this estimate calibrates compression's numbers too.
 */
export function countConversationTokens(messages: ChatMessage[], counter: TokenCounter): number {
  return messages.reduce(
    (sum, message) => sum + counter.count(message.content) + (message.toolCalls ?? []).reduce((calls, call) => calls + counter.count(call.name + call.arguments), 0) + MESSAGE_OVERHEAD_TOKENS,
    0,
  );
}
