import Anthropic from '@anthropic-ai/sdk';
import { labelHeaders } from './chat-request-labels';
import type { ApplicationFailure } from '@temporalio/common';
import type { ContextWindow } from '../../src/core/context-window';
import { SecretRedactor, urlCredentials } from '../../src/domain/secret-redaction';
import { finishReasonOf, thinkingState, toAnthropicPrompt, toolChoiceOf } from './anthropic-messages';
import { classifyAnthropicError } from './anthropic-errors';
import type { ChatControls, ChatModel, ChatReply, ChatRequest, ChatUsage } from './chat-model';
import {
  boundedClientOptions,
  DEFAULT_REPLY_LIMITS,
  STREAM_BYTES_PER_REPLY_BYTE,
  type ReplyLimits,
} from './openai-chat-model';
import { probeContextWindow } from './openai-context-window';
import { readStreamedReply, type ReplyBuilder } from './streamed-reply';

/** What {@link createAnthropicMessagesModel} connects to. */
export interface AnthropicEndpoint {
  /** The API's base URL, without `/v1` (ANTHROPIC_BASE_URL; default `https://api.anthropic.com`). */
  baseUrl: string;
  /** ANTHROPIC_API_KEY, sent as the SDK sends it. */
  apiKey: string;
  /** Longest a request may take, in seconds; default the client's (600). */
  timeoutSeconds?: number;
  /** How much of a reply the worker takes; default {@link DEFAULT_REPLY_LIMITS}. */
  replyLimits?: Partial<ReplyLimits>;
  /**
   * Extended thinking's budget, in tokens (REACT_AGENT_THINKING_BUDGET_TOKENS): sent as
   * `thinking: {type: "enabled", budget_tokens}`, temperature and top_p then left out as the API
   * requires. Default none: no `thinking` parameter (the model's own default).
   */
  thinkingBudgetTokens?: number;
  /** `cache_control` breakpoints on the tools, the system prompt and the conversation's last block. Default true. */
  promptCaching?: boolean;
}

/** Options of {@link AnthropicMessagesModel}. */
export interface AnthropicMessagesModelOptions {
  /** The client; created with `maxRetries: 0` (Temporal owns retries) and no OpenTelemetry of its own (the activity's spans are the project's). */
  client: Anthropic;
  /** The endpoint, for messages (never the key). */
  baseUrl: string;
  /** The longest reply text taken, in UTF-8 bytes; default {@link DEFAULT_REPLY_LIMITS}' 1 MiB. */
  maxReplyBytes?: number;
  /** See {@link AnthropicEndpoint.thinkingBudgetTokens}. Default none. */
  thinkingBudgetTokens?: number;
  /** See {@link AnthropicEndpoint.promptCaching}. Default true. */
  promptCaching?: boolean;
  /** Turns what the client threw into a typed failure. Default {@link classifyAnthropicError} (`ReactAgent.Model.*`). */
  classifyError?: (error: unknown, endpoint: { baseUrl: string; model: string }) => ApplicationFailure;
  /** How a local server's context window is asked for when the Models API does not say it: default the global fetch. */
  windowProbeFetch?: typeof fetch;
}

/** Longest reply when the request names none: the Messages API requires `max_tokens`. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192;

/** A {@link ChatModel} over Anthropic's Messages API, with its own client on the bounded fetch. */
export function createAnthropicMessagesModel(
  endpoint: AnthropicEndpoint,
  classifyError?: AnthropicMessagesModelOptions['classifyError'],
): AnthropicMessagesModel {
  const { limits, options } = boundedClientOptions(endpoint);
  const client = new Anthropic({ ...options, openTelemetry: false });
  return new AnthropicMessagesModel({
    client,
    baseUrl: endpoint.baseUrl,
    maxReplyBytes: limits.maxReplyBytes,
    ...(endpoint.thinkingBudgetTokens !== undefined ? { thinkingBudgetTokens: endpoint.thinkingBudgetTokens } : {}),
    ...(endpoint.promptCaching !== undefined ? { promptCaching: endpoint.promptCaching } : {}),
    ...(classifyError ? { classifyError } : {}),
  });
}

/** One content block of the reply as it streams. */
type StreamedBlock =
  | { type: 'text' }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; call: number }
  | { type: 'other' };

/**
 * Anthropic's Messages API (Claude; llama-server's `/v1/messages`; Anthropic-compatible
 * gateways), always streamed: text and thinking deltas as content and reasoning, `tool_use` blocks
 * as native tool calls, thinking blocks (with their signatures) kept as the reply's provider state
 * for the next call, usage with cache reads and writes, `max_tokens` as finish reason `length`.
 */
export class AnthropicMessagesModel implements ChatModel {
  private readonly redactor: SecretRedactor;

  constructor(private readonly options: AnthropicMessagesModelOptions) {
    this.redactor = new SecretRedactor([options.client.apiKey ?? '', ...urlCredentials(options.baseUrl)]);
  }

  /** The Models API's `max_input_tokens`; else what a local server says (llama-server's `/props`, …). */
  async contextWindow(model: string): Promise<ContextWindow | undefined> {
    try {
      const info = await this.options.client.models.retrieve(model, {}, { timeout: 5_000 });
      const tokens = info.max_input_tokens;
      if (typeof tokens === 'number' && tokens > 0)
        return { tokens, source: 'Anthropic /v1/models (max_input_tokens)' };
    } catch {
      // Not every Anthropic-compatible server has the Models API.
    }
    return probeContextWindow(
      {
        baseUrl: `${this.options.baseUrl.replace(/\/+$/, '')}/v1`,
        apiKey: this.options.client.apiKey ?? '',
        ...(this.options.windowProbeFetch ? { fetch: this.options.windowProbeFetch } : {}),
      },
      model,
    );
  }

  chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply> {
    const classify = this.options.classifyError ?? classifyAnthropicError;
    const endpoint = { baseUrl: this.options.baseUrl, model: request.model };
    const { sampling = {}, tools = [] } = request;
    const prompt = toAnthropicPrompt(request.messages, tools, this.options.promptCaching ?? true);
    const thinking = this.options.thinkingBudgetTokens;
    const body: Anthropic.MessageCreateParamsStreaming = {
      model: request.model,
      max_tokens: sampling.maxOutputTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
      messages: prompt.messages,
      stream: true,
      ...(prompt.system.length ? { system: prompt.system } : {}),
      ...(prompt.tools.length ? { tools: prompt.tools, tool_choice: toolChoiceOf(request) } : {}),
      ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
      ...(thinking !== undefined
        ? { thinking: { type: 'enabled', budget_tokens: thinking } }
        : // Recent models take one of temperature and top_p, not both: temperature when set.
          sampling.temperature !== undefined
          ? { temperature: sampling.temperature }
          : sampling.topP !== undefined
            ? { top_p: sampling.topP }
            : {}),
    };
    const blocks = new Map<number, StreamedBlock>();
    return readStreamedReply<Anthropic.RawMessageStreamEvent>({
      controls,
      maxReplyBytes: this.options.maxReplyBytes ?? DEFAULT_REPLY_LIMITS.maxReplyBytes,
      streamBytesPerReplyByte: STREAM_BYTES_PER_REPLY_BYTE,
      classify: (error) => classify(error, endpoint),
      redactor: this.redactor,
      open: (signal) =>
        this.options.client.messages.create(body, {
          signal,
          headers: labelHeaders(request.labels),
        }),
      read: (event, reply) => readEvent(event, reply, blocks),
    });
  }
}

/** Reads one stream event into the reply; false once the reply is too large. */
function readEvent(
  event: Anthropic.RawMessageStreamEvent,
  reply: ReplyBuilder,
  blocks: Map<number, StreamedBlock>,
): boolean {
  switch (event.type) {
    case 'message_start':
      reply.usage = usageOf(event.message.usage, reply.usage);
      return true;
    case 'content_block_start': {
      const block = event.content_block;
      if (block.type === 'text') {
        blocks.set(event.index, { type: 'text' });
        return reply.addContent(block.text);
      }
      if (block.type === 'thinking') {
        blocks.set(event.index, { type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
        return reply.addReasoning(block.thinking);
      }
      if (block.type === 'redacted_thinking') {
        blocks.set(event.index, { type: 'redacted_thinking', data: block.data });
        return reply.countOpaque(block.data);
      }
      if (block.type === 'tool_use') {
        const call = [...blocks.values()].filter((known) => known.type === 'tool_use').length;
        blocks.set(event.index, { type: 'tool_use', call });
        // The input streams as input_json_delta; a server that sends it whole in the start has it here.
        const input = block.input && Object.keys(block.input).length ? JSON.stringify(block.input) : '';
        return reply.addToolCall(call, { id: block.id, name: block.name, arguments: input });
      }
      blocks.set(event.index, { type: 'other' });
      return true;
    }
    case 'content_block_delta': {
      const block = blocks.get(event.index);
      const delta = event.delta;
      if (delta.type === 'text_delta') return reply.addContent(delta.text);
      if (delta.type === 'thinking_delta') {
        if (block?.type === 'thinking') block.thinking += delta.thinking;
        return reply.addReasoning(delta.thinking);
      }
      if (delta.type === 'signature_delta') {
        if (block?.type === 'thinking') block.signature += delta.signature;
        return reply.countOpaque(delta.signature);
      }
      if (delta.type === 'input_json_delta' && block?.type === 'tool_use')
        return reply.addToolCall(block.call, { arguments: delta.partial_json });
      return true;
    }
    case 'message_delta':
      reply.finishReason = finishReasonOf(event.delta.stop_reason);
      reply.usage = usageOf(event.usage, reply.usage);
      return true;
    case 'message_stop': {
      const thinking = [...blocks.entries()]
        .sort(([left], [right]) => left - right)
        .flatMap(([, block]): Array<Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam> =>
          block.type === 'thinking'
            ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }]
            : block.type === 'redacted_thinking'
              ? [{ type: 'redacted_thinking', data: block.data }]
              : [],
        );
      const state = thinkingState(thinking);
      if (state) reply.provider = state;
      return true;
    }
    default:
      return true;
  }
}

/** Usage fields as `message_start` and `message_delta` carry them (the delta's are cumulative; absent ones keep the start's). */
interface ReportedUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * Anthropic's usage in the project's terms. Its `input_tokens` are only the uncached ones: the
 * prompt is those, the cache reads and the cache writes together; the reads are
 * `cachedPromptTokens`, the writes `cacheWriteTokens`.
 */
export function usageOf(reported: ReportedUsage, previous: ChatUsage | undefined): ChatUsage {
  const number = (value: number | null | undefined, fallback: number | undefined): number | undefined =>
    typeof value === 'number' ? value : fallback;
  const read = number(reported.cache_read_input_tokens, previous?.cachedPromptTokens);
  const written = number(reported.cache_creation_input_tokens, previous?.cacheWriteTokens);
  const uncached =
    typeof reported.input_tokens === 'number'
      ? reported.input_tokens
      : (previous?.promptTokens ?? 0) - (previous?.cachedPromptTokens ?? 0) - (previous?.cacheWriteTokens ?? 0);
  return {
    promptTokens: uncached + (read ?? 0) + (written ?? 0),
    completionTokens: number(reported.output_tokens, previous?.completionTokens) ?? 0,
    ...(read !== undefined ? { cachedPromptTokens: read } : {}),
    ...(written !== undefined ? { cacheWriteTokens: written } : {}),
  };
}
