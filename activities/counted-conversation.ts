import type { ChatMessage } from '../src/core/messages';
import { carriedCounts, completeCounts, storableCounts } from '../src/domain/message-token-counts';
import { loadConversationEntries, loadMessages, putConversation } from '../src/storage/conversation';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { countMessageTokens, countsLabel, type TokenCounter } from './token-counter';

/**
 * A conversation as the model and compression activities work on it: its message references,
 * the messages, and each one's token count (issue 21) — carried from the manifest where it kept
 * them, counted where it did not (new messages, conversations stored before counts were kept).
 */
export interface CountedConversation {
  references: string[];
  messages: ChatMessage[];
  counts: number[];
}

/**
 * The messages under `references` with their counts: `known` gives those carried (one entry per
 * reference, `undefined` where there is none); the others are counted now.
 */
export async function countedMessages(
  store: TranscriptStore,
  references: string[],
  known: ReadonlyArray<number | undefined>,
  counter: TokenCounter,
): Promise<CountedConversation> {
  const messages = await loadMessages(store, references);
  return { references, messages, counts: messageCounts(messages, known, counter) };
}

/** Each message's count: the carried one (`known`, one entry per message) where there is one, else counted now. */
export function messageCounts(
  messages: readonly ChatMessage[],
  known: ReadonlyArray<number | undefined>,
  counter: TokenCounter,
): number[] {
  return completeCounts(known, (index) => countMessageTokens(messages[index] as ChatMessage, counter)).counts;
}

/** A stored conversation's references and the counts its manifest carries for this counter (`undefined` where none). */
export async function carriedConversationCounts(
  store: TranscriptStore,
  conversation: string,
  counter: TokenCounter,
): Promise<{ references: string[]; known: Array<number | undefined> }> {
  const entries = await loadConversationEntries(store, conversation);
  return {
    references: entries.messages,
    known: carriedCounts(entries.tokens, countsLabel(counter), entries.messages.length),
  };
}

/** Stores a conversation's manifest with its messages' counts (none for a counter whose counts are not carried). */
export async function putCountedConversation(
  store: TranscriptStore,
  references: string[],
  counts: number[],
  counter: TokenCounter,
): Promise<string> {
  return putConversation(store, references, storableCounts(countsLabel(counter), counts));
}
