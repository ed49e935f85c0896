import type { ChatMessage, PendingMessage } from '../../src/core/messages';
import { totalOfCounts } from '../../src/domain/message-token-counts';
import { composeMessage, loadMessages, messageReference, putMessage } from '../../src/storage/conversation';
import type { TranscriptStore } from '../../src/storage/transcript-store';
import { carriedConversationCounts, messageCounts } from '../counted-conversation';
import type { TokenCounter } from '../token-counter';

/** A message with the reference it is (to be) stored under. */
export interface StoredMessage {
  message: ChatMessage;
  reference: string;
}

/** A conversation's messages with their references and the token counts its manifest carries (undefined: to be counted). */
export interface CarriedConversation {
  references: string[];
  messages: ChatMessage[];
  known: Array<number | undefined>;
}

/** A conversation with messages appended, and the messages it adds to the stored conversation. */
export interface AppendedConversation extends CarriedConversation {
  /** New since the stored conversation, with the references the prompt names them by: stored before the model is called. */
  added: StoredMessage[];
}

/** A model call's prompt, ready to send: its new messages are stored. */
export interface PreparedPrompt {
  /** Its messages' references, in order: the conversation the reply is appended to. */
  references: string[];
  messages: ChatMessage[];
  /** Each message's token count, in order (carried from the manifest, or counted). */
  counts: number[];
  /** Our own count of the whole prompt; a server's reported usage takes its place when there is one. */
  estimatedPromptTokens: number;
}

/**
 * Appends messages to a conversation, a user message that follows a user message joined to it
 * (chat templates want user and assistant turns to alternate): the request for the final answer
 * after a compression that took the last observations in, or a message injected then. The
 * question (the second message) is never joined to. The carried counts follow the references; a
 * joined or new message has none (it is counted). The new messages' references are known before
 * they are stored (content addresses), so they are stored while the prompt is counted.
 */
export function appendAlternating(conversation: CarriedConversation, additions: ChatMessage[]): AppendedConversation {
  const { references, messages, known } = conversation;
  const [first, ...rest] = additions;
  const last = messages.at(-1);
  const joinLast = first?.role === 'user' && references.length > 2 && last?.role === 'user';
  const added = (joinLast ? [{ ...last, content: `${last.content}\n\n${first.content}` }, ...rest] : additions).map(
    (message) => ({ message, reference: messageReference(message) }),
  );
  const kept = joinLast ? references.length - 1 : references.length;
  return {
    references: [...references.slice(0, kept), ...added.map(({ reference }) => reference)],
    messages: [...messages.slice(0, kept), ...added.map(({ message }) => message)],
    known: [...known.slice(0, kept), ...added.map(() => undefined)],
    added,
  };
}

/** Stores messages, checking that the store named each by the reference a manifest already names it by ({@link messageReference}). */
export async function storeMessages(store: TranscriptStore, messages: StoredMessage[]): Promise<void> {
  await Promise.all(
    messages.map(async ({ message, reference: expected }) => {
      const stored = await putMessage(store, message);
      if (stored !== expected)
        throw new Error(
          `The transcript store named a message ${stored}, not its content address ${expected}: a TranscriptStore must name a text by the SHA-256 of its UTF-8 bytes.`,
        );
    }),
  );
}

/**
 * A model call's prompt: the stored conversation with the pending messages (the previous turn's
 * observations) appended ({@link appendAlternating}), counted — only the messages new since the
 * last call, the others' counts carried forward (issue 21) — and its new messages stored while it
 * is counted. Resolves only once they are stored, so the model is never called on a prompt whose
 * messages a manifest could name before they exist.
 */
export async function preparePrompt(
  store: TranscriptStore,
  tokenCounter: TokenCounter,
  conversation: string,
  pending: PendingMessage[],
): Promise<PreparedPrompt> {
  const appended = await Promise.all(pending.map((message) => composeMessage(store, message)));
  const carried = await carriedConversationCounts(store, conversation, tokenCounter);
  const prompt = appendAlternating({ ...carried, messages: await loadMessages(store, carried.references) }, appended);
  const storingAdded = storeMessages(store, prompt.added);
  storingAdded.catch(() => undefined); // awaited below, before the prompt is handed over
  const counts = messageCounts(prompt.messages, prompt.known, tokenCounter);
  await storingAdded;
  return {
    references: prompt.references,
    messages: prompt.messages,
    counts,
    estimatedPromptTokens: totalOfCounts(counts),
  };
}
