/**
 * A scripted {@link ChatModel} with no HTTP and no openai client, for unit tests of what calls a
 * model (compression's summaries, the judge, the page summariser) and for the workflow tier
 * (test/workflow/, whole runs on an in-process worker): each call is answered by
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

/**
 * A whole reply as a script gives it: the text, and optionally native tool calls, the finish
 * reason (default `stop`, or `tool_calls` with calls), reasoning and the usage the server reports
 * (default: none).
 */
export type FakeChatReply = Pick<ChatReply, 'content'> &
  Partial<Pick<ChatReply, 'toolCalls' | 'finishReason' | 'reasoning' | 'usage'>>;

/** Answers a call: the reply's text (or a whole {@link FakeChatReply}), or an error to throw. */
export type ChatModelScript = (
  request: ChatRequest,
  callIndex: number,
) => string | FakeChatReply | Error | Promise<string | FakeChatReply | Error>;

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
      const reply = typeof answer === 'string' ? { content: answer } : answer;
      const toolCalls = reply.toolCalls ?? [];
      controls.onDelta?.({ kind: 'content', text: reply.content });
      controls.onProgress?.({
        chunks: 1,
        contentCharacters: reply.content.length,
        reasoningCharacters: reply.reasoning?.length ?? 0,
      });
      return {
        content: reply.content,
        reasoning: reply.reasoning ?? '',
        toolCalls,
        finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        ...(reply.usage ? { usage: reply.usage } : {}),
        chunks: 1,
      };
    },
    async contextWindow() {
      return window;
    },
  };
}
