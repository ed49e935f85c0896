import type { ChatMessage, MessagePart, PendingMessage } from '../core/messages';
import type { ToolSpec } from '../core/tool-spec';
import { isMessageTokenCounts, type MessageTokenCounts } from '../domain/message-token-counts';
import { referenceOf, type TranscriptStore } from './transcript-store';

/**
 * A conversation is stored as a manifest blob listing its message blobs in order. Appending
 * writes the new messages and a new manifest; earlier manifests stay valid, so every
 * reference that history ever carried still resolves to what the model saw at that point.
 * Since issue 21 a manifest may carry each message's token count (`tokens`), so the next model
 * call counts only what is new; manifests written before, or without counts, have none.
 */
interface ConversationManifest {
  kind: 'conversation';
  messages: string[];
  tokens?: MessageTokenCounts;
}

/** A conversation's manifest as read: its message references, and their token counts when it has usable ones. */
export interface ConversationEntries {
  messages: string[];
  tokens?: MessageTokenCounts;
}

/** How a message is stored: its fields as JSON, those it does not have left out. */
function messageText(message: ChatMessage): string {
  return JSON.stringify({
    role: message.role,
    content: message.content,
    ...(message.reasoning ? { reasoning: message.reasoning } : {}),
    ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
    ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
    ...(message.provider ? { provider: message.provider } : {}),
  });
}

export async function putMessage(store: TranscriptStore, message: ChatMessage): Promise<string> {
  return store.putText(messageText(message));
}

/** The reference {@link putMessage} will give a message, known before it is stored (a manifest can name it while it is written). */
export function messageReference(message: ChatMessage): string {
  return referenceOf(messageText(message));
}

/** Stores a manifest of these messages, with their token counts when given (one per message). */
export async function putConversation(
  store: TranscriptStore,
  messageReferences: string[],
  tokens?: MessageTokenCounts,
): Promise<string> {
  const manifest: ConversationManifest = {
    kind: 'conversation',
    messages: messageReferences,
    ...(tokens ? { tokens } : {}),
  };
  return store.putText(JSON.stringify(manifest));
}

/** A conversation's message references and token counts; counts that do not fit its messages are left out (they are counted again). */
export async function loadConversationEntries(
  store: TranscriptStore,
  conversation: string,
): Promise<ConversationEntries> {
  const manifest = JSON.parse(await store.getText(conversation)) as ConversationManifest;
  if (manifest?.kind !== 'conversation' || !Array.isArray(manifest.messages)) {
    throw new TypeError(`Transcript blob ${conversation} is not a conversation manifest`);
  }
  return {
    messages: manifest.messages,
    ...(isMessageTokenCounts(manifest.tokens, manifest.messages.length) ? { tokens: manifest.tokens } : {}),
  };
}

export async function loadMessageReferences(store: TranscriptStore, conversation: string): Promise<string[]> {
  return (await loadConversationEntries(store, conversation)).messages;
}

/** The messages stored under these references, in order. */
export async function loadMessages(store: TranscriptStore, references: string[]): Promise<ChatMessage[]> {
  return Promise.all(references.map(async (reference) => JSON.parse(await store.getText(reference)) as ChatMessage));
}

export async function loadConversation(store: TranscriptStore, conversation: string): Promise<ChatMessage[]> {
  return loadMessages(store, await loadMessageReferences(store, conversation));
}

/** Turns a pending message's parts into its text, reading referenced blobs from the store. */
export async function composeMessage(store: TranscriptStore, pending: PendingMessage): Promise<ChatMessage> {
  const pieces = await Promise.all(
    pending.parts.map((part: MessagePart) => ('ref' in part ? store.getText(part.ref) : part.text)),
  );
  return {
    role: pending.role,
    content: pieces.join(''),
    ...(pending.toolCallId ? { toolCallId: pending.toolCallId } : {}),
  };
}

/** Appends composed and literal messages; returns the new conversation's reference and the composed messages. */
export async function appendToConversation(
  store: TranscriptStore,
  conversation: string,
  additions: ChatMessage[],
): Promise<{ conversation: string; messageReferences: string[] }> {
  const existing = await loadMessageReferences(store, conversation);
  const added = await Promise.all(additions.map((message) => putMessage(store, message)));
  const messageReferences = [...existing, ...added];
  return { conversation: await putConversation(store, messageReferences), messageReferences: added };
}

/**
 * A run's tool list (issue 18): its specs as one blob, a JSON array in the run's order, stored
 * when the transcript opens; the reference goes into history, the specs never do. The same list
 * stored twice is one blob.
 */
export async function putToolSpecs(store: TranscriptStore, specs: ToolSpec[]): Promise<string> {
  return store.putText(JSON.stringify(specs));
}

/** The tool specs stored under `reference` by {@link putToolSpecs}. */
export async function loadToolSpecs(store: TranscriptStore, reference: string): Promise<ToolSpec[]> {
  const specs = JSON.parse(await store.getText(reference)) as unknown;
  if (
    !Array.isArray(specs) ||
    !specs.every(
      (spec) =>
        typeof (spec as Partial<ToolSpec> | null)?.name === 'string' &&
        typeof (spec as ToolSpec).parameters === 'object',
    )
  ) {
    throw new TypeError(`Transcript blob ${reference} is not a list of tool specs`);
  }
  return specs as ToolSpec[];
}
