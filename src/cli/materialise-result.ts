import { loadConversation } from '../../activities/conversation';
import type { TranscriptStore } from '../../activities/transcript-store';
import type { MaterialisedRunResult, ResearchRunResult } from '../run-input';

/** The run result with `messages` read from the transcript store: DeepResearch's evaluation shape. */
export async function materialiseResult(store: TranscriptStore, result: ResearchRunResult): Promise<MaterialisedRunResult> {
  const messages = result.transcript ? await loadConversation(store, result.transcript) : [];
  return { ...result, messages: messages.map((message) => ({ role: message.role, content: message.content })) };
}
