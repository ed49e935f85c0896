import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { ContextWindow } from '../../src/core/context-window';
import { FailureTypes } from '../../src/core/failure-types';
import { preview } from '../../src/core/text';
import type { NativeToolCall } from '../../src/core/messages';
import {
  DEFAULT_FIRST_CHUNK_LIMIT_MS,
  DEFAULT_STALL_LIMIT_MS,
  type ChatControls,
  type ChatModel,
  type ChatProgress,
  type ChatReply,
  type ChatRequest,
  type ChatUsage,
} from './chat-model';
import { SecretRedactor, urlCredentials } from '../../src/domain/secret-redaction';
import { boundedEventStreamFetch, ModelStreamLimitError } from './bounded-event-stream';
import { classifyModelError } from './openai-errors';
import { probeContextWindow, type WindowProbeOptions } from './openai-context-window';
import { reasoningOfDelta, toOpenAIMessage, toOpenAITool } from './openai-messages';
import { ModelStreamWatchdog } from './stream-watchdog';

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

/** Request headers a label becomes: `x-react-agent-<label>`, so a server's logs can be matched to a run and a call. */
export const labelHeader = (label: string): string => `x-react-agent-${label}`;

/** A {@link ChatModel} over an OpenAI-compatible endpoint, with its own client (`maxRetries: 0`). */
export function createOpenAIChatModel(
  endpoint: OpenAIEndpoint,
  classifyError?: OpenAIChatModelOptions['classifyError'],
): OpenAIChatModel {
  const limits = { ...DEFAULT_REPLY_LIMITS, ...endpoint.replyLimits };
  const client = new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    maxRetries: 0,
    logger: shortenedLog,
    // Response bodies cut into whole events in one pass and bounded (bounded-event-stream.ts).
    fetch: boundedEventStreamFetch({
      maxLineBytes: limits.maxLineBytes,
      maxStreamBytes: limits.maxReplyBytes * STREAM_BYTES_PER_REPLY_BYTE,
    }),
    ...(endpoint.timeoutSeconds !== undefined ? { timeout: endpoint.timeoutSeconds * 1000 } : {}),
  });
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

  async chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply> {
    const classify = this.options.classifyError ?? classifyModelError;
    const endpoint = { baseUrl: this.options.baseUrl, model: request.model };
    const firstChunkLimitMs = controls.firstChunkLimitMs ?? DEFAULT_FIRST_CHUNK_LIMIT_MS;
    const stallLimitMs = controls.stallLimitMs ?? DEFAULT_STALL_LIMIT_MS;
    const requestAbort = new AbortController();
    const signal = AbortSignal.any([controls.signal, requestAbort.signal]);

    let content = '';
    let reasoning = '';
    const toolCallParts: NativeToolCall[] = [];
    let finishReason = '';
    let usage: ChatUsage | undefined;
    let chunks = 0;
    const maxReplyBytes = this.options.maxReplyBytes ?? DEFAULT_REPLY_LIMITS.maxReplyBytes;
    let replyBytes = 0;
    let tooLarge: ApplicationFailure | undefined;
    /** Counts a piece of the reply's text; false once the reply is larger than it may be. */
    const taken = (text: string): boolean => {
      replyBytes += Buffer.byteLength(text);
      if (replyBytes > maxReplyBytes)
        tooLarge = replyTooLarge(
          `its text passed ${maxReplyBytes} bytes (REACT_AGENT_MODEL_MAX_REPLY_BYTES) after ${chunks} chunks`,
        );
      return tooLarge === undefined;
    };
    const progress = (): ChatProgress => ({
      chunks,
      contentCharacters: content.length,
      reasoningCharacters: reasoning.length,
      ...(chunks === 0 ? { waitingForFirstChunkMs: watchdog.waitForFirstChunkMs } : {}),
    });
    const watchdog = new ModelStreamWatchdog({
      firstTokenLimitMs: firstChunkLimitMs,
      stallLimitMs,
      ...(controls.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: controls.heartbeatIntervalMs } : {}),
      heartbeat: () => controls.onProgress?.(progress()),
      abandon: () => requestAbort.abort(),
    });
    const { sampling = {}, tools = [] } = request;
    try {
      const stream = await this.options.client.chat.completions.create(
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
          headers: Object.fromEntries(
            Object.entries(request.labels ?? {}).map(([label, value]) => [labelHeader(label), value]),
          ),
        },
      );
      for await (const chunk of stream) {
        watchdog.chunkArrived();
        chunks += 1;
        const choice = chunk.choices[0];
        const reasoningDelta = reasoningOfDelta(choice?.delta);
        // Leaving the loop aborts the request.
        if (!taken(reasoningDelta ?? '') || !taken(choice?.delta?.content ?? '')) break;
        if (reasoningDelta) {
          reasoning += reasoningDelta;
          controls.onDelta?.({ kind: 'reasoning', text: reasoningDelta });
        }
        if (choice?.delta?.content) {
          content += choice.delta.content;
          controls.onDelta?.({ kind: 'content', text: choice.delta.content });
        }
        for (const delta of choice?.delta?.tool_calls ?? []) {
          if (!taken(delta.function?.name ?? '') || !taken(delta.function?.arguments ?? '')) break;
          const part = (toolCallParts[delta.index] ??= { id: '', name: '', arguments: '' });
          if (delta.id) part.id = delta.id;
          if (delta.function?.name) {
            part.name += delta.function.name;
            controls.onDelta?.({ kind: 'tool-name', text: delta.function.name, toolCall: delta.index });
          }
          if (delta.function?.arguments) {
            part.arguments += delta.function.arguments;
            controls.onDelta?.({ kind: 'tool-arguments', text: delta.function.arguments, toolCall: delta.index });
          }
        }
        if (tooLarge) break;
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) usage = usageOf(chunk.usage);
        controls.onProgress?.(progress());
      }
    } catch (error) {
      if (error instanceof ModelStreamLimitError) {
        tooLarge = replyTooLarge(
          `${error.limit === 'line' ? 'one line of its stream' : 'its stream'} passed ${error.limitBytes} bytes (${error.limit === 'line' ? 'REACT_AGENT_MODEL_MAX_LINE_BYTES' : `${STREAM_BYTES_PER_REPLY_BYTE} × REACT_AGENT_MODEL_MAX_REPLY_BYTES`}) after ${chunks} chunks`,
        );
      } else if (!controls.signal.aborted && !watchdog.abandoned)
        throw this.redactor.redactError(classify(error, endpoint));
    } finally {
      watchdog.stop();
    }
    // An aborted stream can end quietly instead of throwing, so these are checked either way.
    if (controls.signal.aborted) throw abortReason(controls.signal);
    if (tooLarge) throw tooLarge;
    if (watchdog.abandoned === 'first-token') {
      throw ApplicationFailure.create({
        type: FailureTypes.modelFirstTokenTimeout,
        message:
          `The model sent no reply within ${firstChunkLimitMs / 1000} s (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS); ` +
          'a slow server can take this long to read a long prompt. Abandoned to be retried.',
      });
    }
    if (watchdog.abandoned === 'stall') {
      throw ApplicationFailure.create({
        type: FailureTypes.modelBadResponse,
        message: `The model stream sent nothing for ${stallLimitMs / 1000} s (its stall limit) after ${chunks} chunks; abandoned to be retried.`,
      });
    }
    if (!finishReason) {
      throw ApplicationFailure.create({
        type: FailureTypes.modelBadResponse,
        message: `The model stream ended after ${chunks} chunks without a finish reason; retrying.`,
      });
    }
    return {
      content,
      reasoning,
      toolCalls: toolCallParts.filter(Boolean),
      finishReason,
      ...(usage ? { usage } : {}),
      chunks,
    };
  }
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

/** The failure of a reply larger than the worker takes: not retried (the server would be paid to send it again). */
function replyTooLarge(what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureTypes.modelReplyTooLarge,
    message: `The model's reply was too large: ${what}. The call was abandoned and is not retried.`,
    nonRetryable: true,
  });
}

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

/** The reason a signal aborted with, as an Error (Temporal's cancellation when it is not one). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new CancelledFailure('Activity cancelled');
}
