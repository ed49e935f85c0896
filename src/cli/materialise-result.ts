import { loadConversation } from '../storage/conversation';
import type { TranscriptStore } from '../storage/transcript-store';
import type { ChatMessage } from '../core/messages';
import type { MaterialisedRunResult, ResearchRunResult } from '../core/run-result';

/** The run result with `messages` read from the transcript store: DeepResearch's evaluation shape. */
export async function materialiseResult(
  store: TranscriptStore,
  result: ResearchRunResult,
): Promise<MaterialisedRunResult> {
  const messages = result.transcript ? await loadConversation(store, result.transcript) : [];
  return {
    ...result,
    messages: messages.map((message) => ({ role: message.role, content: contentWithReasoning(message) })),
  };
}

/**
 * A message's content as DeepResearch writes an assistant turn: the reasoning first, as its
 * `<think>` part, when the server streamed it apart (`reasoning_content` / `reasoning`) and the
 * content has no `<think>` of its own.
 */
export function contentWithReasoning(message: ChatMessage): string {
  if (!message.reasoning || message.content.includes('<think>')) return message.content;
  return `<think>${message.reasoning}</think>\n${message.content}`;
}
