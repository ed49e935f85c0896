/**
 * A scripted {@link ChatModel} with no HTTP and no openai client, for unit tests of what calls a
 * model (compression's summaries, the judge, the page summariser): each call is answered by
 * `reply` with text (or an error to throw) and recorded with its request. Tests of the OpenAI
 * adapter itself use `fake-chat-completions.ts` instead.
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */
import type { ChatControls, ChatModel, ChatReply, ChatRequest } from '../../activities/model/chat-model';
import type { ContextWindow } from '../../src/core/context-window';

/** One call: the request and its controls. */
export interface RecordedChatModelCall {
  request: ChatRequest;
  controls: ChatControls;
}

/** Answers a call: the reply's text, or an error to throw. */
export type ChatModelScript = (request: ChatRequest, callIndex: number) => string | Error | Promise<string | Error>;

export interface FakeChatModel extends ChatModel {
  calls: RecordedChatModelCall[];
  /** The first message's content of call `index`. */
  promptOf(index: number): string;
}

/** A chat model that answers every call from `script`, reports one progress beat per call, and says `window` when asked for its context window. */
export function fakeChatModel(script: ChatModelScript, window?: ContextWindow): FakeChatModel {
  const calls: RecordedChatModelCall[] = [];
  return {
    calls,
    promptOf: (index) => String(calls[index]?.request.messages[0]?.content),
    async chat(request, controls): Promise<ChatReply> {
      calls.push({ request, controls });
      if (controls.signal.aborted) throw controls.signal.reason;
      const answer = await script(request, calls.length - 1);
      if (answer instanceof Error) throw answer;
      controls.onDelta?.({ kind: 'content', text: answer });
      controls.onProgress?.({ chunks: 1, contentCharacters: answer.length, reasoningCharacters: 0 });
      return { content: answer, reasoning: '', toolCalls: [], finishReason: 'stop', chunks: 1 };
    },
    async contextWindow() {
      return window;
    },
  };
}
