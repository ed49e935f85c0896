import type { ApplicationFailure } from '@temporalio/common';
import { labelHeaders } from './chat-request-labels';
import OpenAI from 'openai';
import type { ContextWindow } from '../../src/core/context-window';
import { preview } from '../../src/core/text';
import type { ChatControls, ChatModel, ChatReply, ChatRequest, ChatUsage } from './chat-model';
import { SecretRedactor, urlCredentials } from '../../src/domain/secret-redaction';
import { boundedEventStreamFetch } from './bounded-event-stream';
import { classifyModelError } from './openai-errors';
import { probeContextWindow, type WindowProbeOptions } from './openai-context-window';
import { reasoningOfDelta, toOpenAIMessage, toOpenAITool } from './openai-messages';
import { readStreamedReply, type ReplyBuilder } from './streamed-reply';

/** What {@link createOpenAIChatModel} connects to. */
export interface OpenAIEndpoint {
  /** The API's base URL (OPENAI_BASE_URL, usually ending in `/v1`). */
  baseUrl: string;
  apiKey: string;
  /** Longest a request may take, in seconds; default the openai client's (600). */
  timeoutSeconds?: number;
  /** How much of a reply the worker takes; default {@link DEFAULT_REPLY_LIMITS}. */
  replyLimits?: Partial<ReplyLimits>;
}

/** How much of a reply the worker takes before it gives up on the call (`ReactAgent.Model.ReplyTooLarge`, not retried). */
export interface ReplyLimits {
  /**
   * The reply's text — content, reasoning, native tool calls' names and arguments — in UTF-8
   * bytes (REACT_AGENT_MODEL_MAX_REPLY_BYTES). Default 1 MiB: a hundred times a reply of
   * REACT_AGENT_MAX_OUTPUT_TOKENS' 10,000 tokens, and under Temporal's 2 MB limit on the activity
   * result that carries the parsed reply.
   */
  maxReplyBytes: number;
  /**
   * One line of the response body — an SSE `data:` line, one chunk's JSON — in bytes
   * (REACT_AGENT_MODEL_MAX_LINE_BYTES). Default 4 MiB: a server that sends a whole reply of
   * `maxReplyBytes` in one chunk, with room for JSON's escapes. The body as a whole may be
   * {@link STREAM_BYTES_PER_REPLY_BYTE} times `maxReplyBytes` (the framing of every token).
   */
  maxLineBytes: number;
}

/** {@link ReplyLimits} when not configured. */
export const DEFAULT_REPLY_LIMITS: ReplyLimits = { maxReplyBytes: 1024 * 1024, maxLineBytes: 4 * 1024 * 1024 };

/**
 * The response body may be this many times `maxReplyBytes` in all: an OpenAI chunk of one token
 * of a few bytes is about 200 bytes of JSON and SSE framing.
 */
export const STREAM_BYTES_PER_REPLY_BYTE = 64;

/** Options of {@link OpenAIChatModel}. */
export interface OpenAIChatModelOptions {
  /** The client; created with `maxRetries: 0`, since Temporal owns retries. */
  client: OpenAI;
  /** The endpoint, for messages (never the key). */
  baseUrl: string;
  /**
   * The longest reply text taken, in UTF-8 bytes; default {@link DEFAULT_REPLY_LIMITS}' 1 MiB. The
   * limits on the response body itself are the client's `fetch` ({@link createOpenAIChatModel}).
   */
  maxReplyBytes?: number;
  /**
   * Turns what the client threw into a typed failure. Default {@link classifyModelError}
   * (`ReactAgent.Model.*`, naming OPENAI_BASE_URL, OPENAI_API_KEY, REACT_AGENT_MODEL).
   */
  classifyError?: (error: unknown, endpoint: { baseUrl: string; model: string }) => ApplicationFailure;
  /** How the context window is asked for (openai-context-window.ts): fetch and timeout; default the global fetch, 5 s. */
  windowProbe?: Pick<WindowProbeOptions, 'fetch' | 'timeoutMs'>;
}

export { labelHeader } from './chat-request-labels';

/**
 * What every model API's SDK client is built with (Chat Completions, Responses, Anthropic
 * Messages): the endpoint's URL and key, no retries of its own (the activity's retry policy
 * retries), response bodies cut into whole events in one pass and bounded
 * (bounded-event-stream.ts), and the endpoint's timeout; beside them the reply limits in force.
 */
export function boundedClientOptions(
  endpoint: Pick<OpenAIEndpoint, 'baseUrl' | 'apiKey' | 'timeoutSeconds' | 'replyLimits'>,
) {
  const limits: ReplyLimits = { ...DEFAULT_REPLY_LIMITS, ...endpoint.replyLimits };
  return {
    limits,
    options: {
      baseURL: endpoint.baseUrl,
      apiKey: endpoint.apiKey,
      maxRetries: 0,
      fetch: boundedEventStreamFetch({
        maxLineBytes: limits.maxLineBytes,
        maxStreamBytes: limits.maxReplyBytes * STREAM_BYTES_PER_REPLY_BYTE,
      }),
      ...(endpoint.timeoutSeconds !== undefined ? { timeout: endpoint.timeoutSeconds * 1000 } : {}),
    },
  };
}

/** A {@link ChatModel} over an OpenAI-compatible endpoint, with its own client (`maxRetries: 0`). */
export function createOpenAIChatModel(
  endpoint: OpenAIEndpoint,
  classifyError?: OpenAIChatModelOptions['classifyError'],
): OpenAIChatModel {
  const { limits, options } = boundedClientOptions(endpoint);
  const client = new OpenAI({ ...options, logger: shortenedLog });
  return new OpenAIChatModel({
    client,
    baseUrl: endpoint.baseUrl,
    maxReplyBytes: limits.maxReplyBytes,
    ...(classifyError ? { classifyError } : {}),
  });
}

/**
 * OpenAI-compatible chat completions, always streamed (with `include_usage`): owns the stream
 * loop, the watchdog (first-chunk and stall limits, heartbeats while the request is open), the
 * reading of reasoning and native tool calls from deltas, and error classification (including
 * the context-overflow refusals of each server family, `context-overflow.ts`).
 */
export class OpenAIChatModel implements ChatModel {
  /** The key and the base URL's credentials: a server that echoes them in its error does not get them into the failure. */
  private readonly redactor: SecretRedactor;

  constructor(private readonly options: OpenAIChatModelOptions) {
    this.redactor = new SecretRedactor([options.client.apiKey ?? '', ...urlCredentials(options.baseUrl ?? '')]);
  }

  contextWindow(model: string): Promise<ContextWindow | undefined> {
    return probeContextWindow(
      // openai 7's client may hold no key (null: a token provider instead); ours always has one.
      { baseUrl: this.options.baseUrl, apiKey: this.options.client.apiKey ?? '', ...this.options.windowProbe },
      model,
    );
  }

  chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply> {
    const classify = this.options.classifyError ?? classifyModelError;
    const endpoint = { baseUrl: this.options.baseUrl, model: request.model };
    const { sampling = {}, tools = [] } = request;
    return readStreamedReply<OpenAI.ChatCompletionChunk>({
      controls,
      maxReplyBytes: this.options.maxReplyBytes ?? DEFAULT_REPLY_LIMITS.maxReplyBytes,
      streamBytesPerReplyByte: STREAM_BYTES_PER_REPLY_BYTE,
      classify: (error) => classify(error, endpoint),
      redactor: this.redactor,
      open: (signal) =>
        this.options.client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages.map(toOpenAIMessage),
            stream: true,
            stream_options: { include_usage: true },
            ...(request.stop?.length ? { stop: request.stop } : {}),
            ...(tools.length ? { tools: tools.map(toOpenAITool), tool_choice: request.toolChoice ?? 'auto' } : {}),
            ...(sampling.temperature !== undefined ? { temperature: sampling.temperature } : {}),
            ...(sampling.topP !== undefined ? { top_p: sampling.topP } : {}),
            ...(sampling.maxOutputTokens !== undefined ? { max_tokens: sampling.maxOutputTokens } : {}),
            ...(sampling.presencePenalty !== undefined ? { presence_penalty: sampling.presencePenalty } : {}),
          },
          {
            signal,
            headers: labelHeaders(request.labels),
          },
        ),
      read: readChunk,
    });
  }
}

/** Reads one chunk into the reply: reasoning, content and tool call deltas, then its finish reason and usage; false once the reply is too large. */
function readChunk(chunk: OpenAI.ChatCompletionChunk, reply: ReplyBuilder): boolean {
  const choice = chunk.choices[0];
  if (!reply.addReasoning(reasoningOfDelta(choice?.delta)) || !reply.addContent(choice?.delta?.content ?? ''))
    return false;
  for (const delta of choice?.delta?.tool_calls ?? []) {
    const piece = {
      ...(delta.id ? { id: delta.id } : {}),
      ...(delta.function?.name ? { name: delta.function.name } : {}),
      ...(delta.function?.arguments ? { arguments: delta.function.arguments } : {}),
    };
    if (!reply.addToolCall(delta.index, piece)) return false;
  }
  if (choice?.finish_reason) reply.finishReason = choice.finish_reason;
  if (chunk.usage) reply.usage = usageOf(chunk.usage);
  return true;
}

/** Longest argument of a line the openai client logs, in characters. */
const LOGGED_ARGUMENT_CHARACTERS = 500;

const shortened = (argument: unknown): unknown =>
  typeof argument === 'string'
    ? preview(argument, LOGGED_ARGUMENT_CHARACTERS)
    : Array.isArray(argument)
      ? argument.slice(0, 3).map(shortened)
      : argument;

/**
 * The openai client's log, each argument shortened: openai 6 quoted an event it could not parse
 * whole (up to REACT_AGENT_MODEL_MAX_LINE_BYTES), so a hostile server could fill the worker's log.
 * openai 7 no longer does; whatever a later one logs stays short all the same.
 */
const shortenedLog = {
  error: (...args: unknown[]) => console.error(...args.map(shortened)),
  warn: (...args: unknown[]) => console.warn(...args.map(shortened)),
  info: (...args: unknown[]) => console.info(...args.map(shortened)),
  debug: (...args: unknown[]) => console.debug(...args.map(shortened)),
};

function usageOf(reported: OpenAI.CompletionUsage): ChatUsage {
  const cached = reported.prompt_tokens_details?.cached_tokens;
  const reasoningTokens = reported.completion_tokens_details?.reasoning_tokens;
  return {
    promptTokens: reported.prompt_tokens,
    completionTokens: reported.completion_tokens,
    ...(typeof cached === 'number' ? { cachedPromptTokens: cached } : {}),
    ...(typeof reasoningTokens === 'number' ? { reasoningTokens } : {}),
  };
}
