import { get_encoding, type Tiktoken } from 'tiktoken';
import type { ChatMessage } from '../src/core/messages';
import { pieceMemoCount } from './piece-memo-count';

/** Counts tokens of text for budget estimates (the model's own usage is exact; this is for tool output). */
export interface TokenCounter {
  count(text: string): number;
  /**
   * The encoding's name, when the counts this counter makes may be stored with a conversation and
   * carried forward to later calls (issue 21). Default: none — every call counts the whole
   * conversation again.
   */
  readonly encoding?: string;
}

let sharedEncoder: Tiktoken | undefined;

function encodedLength(text: string): number {
  sharedEncoder ??= get_encoding('o200k_base');
  return sharedEncoder.encode_ordinary(text).length;
}

/** How the tiktoken counter counts. */
export interface TiktokenCounterOptions {
  /**
   * Remember the pieces of text counted (`piece-memo-count.ts`), so known words are looked up, not
   * encoded. Default: true. Either way the text is encoded piece by piece and a long piece slice by
   * slice, so a long run without spaces can neither crash tiktoken nor take it minutes.
   */
  rememberPieces?: boolean;
}

/**
 * A counter over tiktoken's o200k_base encoding, loaded once per worker process. It is an
 * estimate for models with other tokenizers; the workflow calibrates it with the ratio the
 * model server last reported (see src/core/token-calibration.ts). Pieces of text it has seen are
 * remembered (`piece-memo-count.ts`), so the words of a text are mostly looked up, not encoded;
 * the count is tiktoken's either way.
 */
export function createTiktokenCounter(options: TiktokenCounterOptions = {}): TokenCounter {
  const count = pieceMemoCount(encodedLength, options.rememberPieces === false ? { maxPieces: 0 } : {});
  return { encoding: 'o200k_base', count };
}

/** A cheap estimate (4 characters a token), for tests and when tiktoken is not wanted. */
export const characterEstimateCounter: TokenCounter = {
  count: (text) => Math.ceil(text.length / 4),
  encoding: 'characters/4',
};

/** Tokens a chat template adds around each message, in our estimate. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** Our estimate of one message's tokens: its content and native tool calls, plus a little for the template. */
export function countMessageTokens(message: ChatMessage, counter: TokenCounter): number {
  return (
    counter.count(message.content) +
    (message.toolCalls ?? []).reduce((calls, call) => calls + counter.count(call.name + call.arguments), 0) +
    MESSAGE_OVERHEAD_TOKENS
  );
}

/**
 * Our estimate of a conversation's tokens: the sum of its messages' ({@link countMessageTokens}).
 * The model activity and compression both count with this, so the ratio of the server's prompt
 * tokens to this estimate calibrates compression's numbers too.
 */
export function countConversationTokens(messages: ChatMessage[], counter: TokenCounter): number {
  return messages.reduce((sum, message) => sum + countMessageTokens(message, counter), 0);
}

/**
 * The name stored with the per-message counts a counter makes: its encoding and how a message is
 * counted, so counts made another way are never carried. Undefined for a counter without an
 * encoding (its counts are not stored).
 */
export function countsLabel(counter: TokenCounter): string | undefined {
  return counter.encoding === undefined ? undefined : `${counter.encoding}+${MESSAGE_OVERHEAD_TOKENS}/message`;
}
