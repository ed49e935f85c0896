import type { FunctionTool, ResponseInputItem, ResponseReasoningItem } from 'openai/resources/responses/responses';
import type { ChatMessage, ProviderState } from '../../src/core/messages';
import type { ChatTool } from './chat-model';
import { toolCallArgumentsForRequest } from './openai-messages';

/**
 * The project's messages and tools as OpenAI Responses API input items (issue 31), and its
 * `incomplete` status back in Chat Completions' terms.
 *
 * Requests are stateless (`store: false`): each sends the whole conversation. An assistant
 * message sends back, before its text and `function_call` items, the reasoning items it was
 * stored with (`provider`, their `encrypted_content` asked for with
 * `include: ["reasoning.encrypted_content"]`), so a reasoning model keeps its reasoning across
 * the tool calls of a run as it would with `previous_response_id`.
 */

/** The {@link ProviderState.api} of what this API stores with a message. */
export const OPENAI_RESPONSES_API = 'openai-responses';

/** The request's `input`. */
export function toResponsesInput(messages: ChatMessage[]): ResponseInputItem[] {
  return messages.flatMap((message): ResponseInputItem[] => {
    if (message.role === 'tool')
      return [{ type: 'function_call_output', call_id: message.toolCallId ?? '', output: message.content }];
    if (message.role !== 'assistant') return [{ role: message.role, content: message.content }];
    const reasoning =
      message.provider?.api === OPENAI_RESPONSES_API
        ? (message.provider.items as ResponseInputItem[]).filter(isReasoningItem)
        : [];
    return [
      ...reasoning,
      // `type: 'message'` spelled out: llama-server takes an assistant message only with it.
      ...(message.content ? [{ type: 'message' as const, role: 'assistant' as const, content: message.content }] : []),
      ...(message.toolCalls ?? []).map((call): ResponseInputItem => ({
        type: 'function_call',
        call_id: call.id,
        name: call.name,
        arguments: toolCallArgumentsForRequest(call.arguments),
      })),
    ];
  });
}

function isReasoningItem(item: unknown): item is ResponseReasoningItem {
  return (item as { type?: unknown } | null)?.type === 'reasoning';
}

/** A tool spec as a Responses `function` tool (not strict: the project's schemas are not all strict-mode schemas). */
export function toResponsesTool(tool: ChatTool): FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
    strict: false,
  };
}

/** The reasoning items of a reply, as {@link ProviderState} to store with it; undefined when it had none. */
export function reasoningState(items: unknown[]): ProviderState | undefined {
  const reasoning = items.filter(isReasoningItem).map((item) => {
    // What the next request needs: the id, the summary and the encrypted content (not the status).
    const { id, summary, encrypted_content: encrypted, content } = item;
    return {
      type: 'reasoning',
      id,
      // Required in a request; a server may have sent none.
      summary: summary ?? [],
      ...(encrypted ? { encrypted_content: encrypted } : {}),
      ...(content?.length ? { content } : {}),
    };
  });
  return reasoning.length ? { api: OPENAI_RESPONSES_API, items: reasoning } : undefined;
}

/** A response's end as Chat Completions' `finish_reason`: `incomplete` for its output limit is `length`. */
export function finishReasonOfResponse(
  status: string | null | undefined,
  incompleteReason: string | null | undefined,
  calledTools: boolean,
): string {
  if (status === 'incomplete') return incompleteReason === 'content_filter' ? 'content_filter' : 'length';
  if (status === 'completed') return calledTools ? 'tool_calls' : 'stop';
  return status ?? '';
}
