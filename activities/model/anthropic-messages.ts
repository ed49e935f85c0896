import type Anthropic from '@anthropic-ai/sdk';
import type { ChatMessage, ProviderState } from '../../src/core/messages';
import type { ChatRequest, ChatTool } from './chat-model';
import { toolCallArgumentsForRequest } from './openai-messages';

/**
 * The project's messages and tools in Anthropic's Messages API shape (issue 31), and the stop
 * reasons back in Chat Completions' terms.
 *
 * - System messages at the start become `system`; one later in the conversation (none is written
 *   today) becomes user text, since the API has no system role in `messages`.
 * - A `tool` message becomes a `tool_result` block of a user turn; consecutive messages of one
 *   role are one turn (the API wants the results of one reply's calls together, first).
 * - An assistant message sends back, before its text and `tool_use` blocks, the thinking blocks it
 *   was stored with (`provider`, signatures and all): the API requires them on the turn whose tool
 *   calls are being answered.
 * - Prompt caching: `cache_control` on the last tool, the last system block and the last block of
 *   the conversation, so each call writes the prefix the next one reads.
 */

/** The {@link ProviderState.api} of what this API stores with a message. */
export const ANTHROPIC_MESSAGES_API = 'anthropic-messages';

type ContentBlock = Anthropic.ContentBlockParam;
type CacheControl = { type: 'ephemeral' };
const EPHEMERAL: CacheControl = { type: 'ephemeral' };

/** The request's `system`, `messages` and `tools`, with cache breakpoints when `cache` is set. */
export function toAnthropicPrompt(
  messages: ChatMessage[],
  tools: ChatTool[],
  cache: boolean,
): { system: Anthropic.TextBlockParam[]; messages: Anthropic.MessageParam[]; tools: Anthropic.Tool[] } {
  const leading = messages.findIndex((message) => message.role !== 'system');
  const systemMessages = leading === -1 ? messages : messages.slice(0, leading);
  const rest = leading === -1 ? [] : messages.slice(leading);
  const system: Anthropic.TextBlockParam[] = systemMessages
    .filter((message) => message.content)
    .map((message) => ({ type: 'text', text: message.content }));
  const turns: Anthropic.MessageParam[] = [];
  for (const message of rest) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (!blocks.length) continue;
    const last = turns.at(-1);
    if (last && last.role === role) (last.content as ContentBlock[]).push(...blocks);
    else turns.push({ role, content: blocks });
  }
  const anthropicTools: Anthropic.Tool[] = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as Anthropic.Tool.InputSchema,
  }));
  if (cache) {
    const lastTool = anthropicTools.at(-1);
    if (lastTool) lastTool.cache_control = EPHEMERAL;
    const lastSystem = system.at(-1);
    if (lastSystem) lastSystem.cache_control = EPHEMERAL;
    const lastBlock = (turns.at(-1)?.content as ContentBlock[] | undefined)?.at(-1);
    if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking')
      (lastBlock as { cache_control?: CacheControl }).cache_control = EPHEMERAL;
  }
  return { system, messages: turns, tools: anthropicTools };
}

/** One stored message as content blocks (none for an empty one). */
function blocksOf(message: ChatMessage): ContentBlock[] {
  if (message.role === 'tool')
    return [{ type: 'tool_result', tool_use_id: message.toolCallId ?? '', content: message.content || '(empty)' }];
  if (message.role !== 'assistant') return message.content ? [{ type: 'text', text: message.content }] : [];
  const thinking =
    message.provider?.api === ANTHROPIC_MESSAGES_API
      ? (message.provider.items as ContentBlock[]).filter(isThinking)
      : [];
  return [
    ...thinking,
    ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
    ...(message.toolCalls ?? []).map((call): ContentBlock => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: JSON.parse(toolCallArgumentsForRequest(call.arguments)) as Record<string, unknown>,
    })),
  ];
}

function isThinking(block: unknown): block is Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam {
  const type = (block as { type?: unknown } | null)?.type;
  return type === 'thinking' || type === 'redacted_thinking';
}

/** The thinking blocks of a reply, as {@link ProviderState} to store with it; undefined when it had none. */
export function thinkingState(blocks: unknown[]): ProviderState | undefined {
  const thinking = blocks.filter(isThinking);
  return thinking.length ? { api: ANTHROPIC_MESSAGES_API, items: thinking } : undefined;
}

/** Anthropic's `stop_reason` as Chat Completions' `finish_reason` (the loop reads those). */
export function finishReasonOf(stopReason: string | null | undefined): string {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return stopReason ?? '';
  }
}

/** Anthropic's `tool_choice` for the request's. */
export function toolChoiceOf(request: ChatRequest): Anthropic.ToolChoice {
  return request.toolChoice === 'none' ? { type: 'none' } : { type: 'auto' };
}
