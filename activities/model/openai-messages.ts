import JSON5 from 'json5';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage } from '../../src/core/messages';
import type { ChatTool } from './chat-model';

/**
 * Our stored message in the OpenAI chat API's shape, as it is sent back to the server.
 *
 * Two things in the transcript are not sent: the model's reasoning (servers reject or ignore
 * it in a request, and it is not part of what the model said), and tool-call arguments that are
 * not a JSON object (see {@link toolCallArgumentsForRequest}).
 */
export function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === 'tool')
    return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  if (message.role === 'assistant' && message.toolCalls?.length) {
    return {
      role: 'assistant',
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: toolCallArgumentsForRequest(call.arguments) },
      })),
    };
  }
  return { role: message.role, content: message.content } as ChatCompletionMessageParam;
}

/**
 * The `arguments` of a history tool call as a server accepts them: a JSON object. The model's
 * own text when it is one; its JSON5 reading re-serialised when it is lenient JSON (what the
 * native protocol ran); `{}` when it is not an object at all — e.g. cut off by `max_tokens`.
 * llama-server refuses a history whose arguments do not parse (HTTP 500, "Failed to parse tool
 * call arguments as JSON"), and retrying cannot help. The raw text stays in the transcript, and
 * the model was told its call was malformed by that call's observation.
 */
export function toolCallArgumentsForRequest(raw: string): string {
  if (isJsonObject(parseOrUndefined(JSON.parse, raw))) return raw;
  const lenient = parseOrUndefined(JSON5.parse, raw);
  return isJsonObject(lenient) ? JSON.stringify(lenient) : '{}';
}

function parseOrUndefined(parse: (text: string) => unknown, text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

function isJsonObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A streamed delta as reasoning servers send it: the openai types know neither field. */
type ReasoningDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown };

/**
 * The reasoning text in a streamed delta: `reasoning_content` (llama-server with a thinking
 * template, DeepSeek, vLLM's reasoning parsers) or `reasoning` (vLLM, Ollama). A server that
 * sends both carries the same text in each, so only one is read.
 */
export function reasoningOfDelta(delta: ChatCompletionChunk.Choice.Delta | undefined): string {
  const { reasoning_content: reasoningContent, reasoning } = (delta ?? {}) as ReasoningDelta;
  if (typeof reasoningContent === 'string') return reasoningContent;
  return typeof reasoning === 'string' ? reasoning : '';
}

/** A tool spec as the chat API's `tools` entry (native tool calling). */
export function toOpenAITool(tool: ChatTool): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
