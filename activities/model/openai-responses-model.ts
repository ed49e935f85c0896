import OpenAI from 'openai';
import { labelHeaders } from './chat-request-labels';
import type { ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import type { ContextWindow } from '../../src/core/context-window';
import { SecretRedactor, urlCredentials } from '../../src/domain/secret-redaction';
import type { ChatControls, ChatModel, ChatReply, ChatRequest, ChatUsage } from './chat-model';
import {
  boundedClientOptions,
  DEFAULT_REPLY_LIMITS,
  STREAM_BYTES_PER_REPLY_BYTE,
  type OpenAIChatModelOptions,
  type ReplyLimits,
} from './openai-chat-model';
import { probeContextWindow } from './openai-context-window';
import { classifyModelError } from './openai-errors';
import { finishReasonOfResponse, reasoningState, toResponsesInput, toResponsesTool } from './openai-responses-messages';
import { readStreamedReply, type ReplyBuilder } from './streamed-reply';

/** What {@link createOpenAIResponsesModel} connects to. */
export interface OpenAIResponsesEndpoint {
  /** The API's base URL (OPENAI_BASE_URL, usually ending in `/v1`). */
  baseUrl: string;
  apiKey: string;
  /** Longest a request may take, in seconds; default the openai client's (600). */
  timeoutSeconds?: number;
  /** How much of a reply the worker takes; default {@link DEFAULT_REPLY_LIMITS}. */
  replyLimits?: Partial<ReplyLimits>;
  /** `reasoning.effort` (REACT_AGENT_REASONING_EFFORT); default none sent (the model's own). */
  reasoningEffort?: string;
}

/** Options of {@link OpenAIResponsesModel}. */
export interface OpenAIResponsesModelOptions {
  /** The client; created with `maxRetries: 0`, since Temporal owns retries. */
  client: OpenAI;
  /** The endpoint, for messages (never the key). */
  baseUrl: string;
  /** The longest reply text taken, in UTF-8 bytes; default {@link DEFAULT_REPLY_LIMITS}' 1 MiB. */
  maxReplyBytes?: number;
  /** See {@link OpenAIResponsesEndpoint.reasoningEffort}. Default none. */
  reasoningEffort?: string;
  /** Turns what the client threw into a typed failure. Default {@link classifyModelError} (`ReactAgent.Model.*`). */
  classifyError?: OpenAIChatModelOptions['classifyError'];
  /** How a server's context window is asked for (openai-context-window.ts); default the global fetch. */
  windowProbeFetch?: typeof fetch;
}

/** A {@link ChatModel} over OpenAI's Responses API, with its own client on the bounded fetch. */
export function createOpenAIResponsesModel(
  endpoint: OpenAIResponsesEndpoint,
  classifyError?: OpenAIResponsesModelOptions['classifyError'],
): OpenAIResponsesModel {
  const { limits, options } = boundedClientOptions(endpoint);
  const client = new OpenAI(options);
  return new OpenAIResponsesModel({
    client,
    baseUrl: endpoint.baseUrl,
    maxReplyBytes: limits.maxReplyBytes,
    ...(endpoint.reasoningEffort !== undefined ? { reasoningEffort: endpoint.reasoningEffort } : {}),
    ...(classifyError ? { classifyError } : {}),
  });
}

/**
 * OpenAI's Responses API (GPT-5-class reasoning models; llama-server's and vLLM's `/v1/responses`),
 * stateless (`store: false`) and streamed: output text as content, reasoning text or its summary
 * as reasoning, `function_call` items as native tool calls, the reasoning items (with their
 * encrypted content) kept as the reply's provider state for the next call, `incomplete` as finish
 * reason `length`. Stop sequences are not part of this API and are not sent.
 */
export class OpenAIResponsesModel implements ChatModel {
  private readonly redactor: SecretRedactor;

  constructor(private readonly options: OpenAIResponsesModelOptions) {
    this.redactor = new SecretRedactor([options.client.apiKey ?? '', ...urlCredentials(options.baseUrl)]);
  }

  contextWindow(model: string): Promise<ContextWindow | undefined> {
    return probeContextWindow(
      {
        baseUrl: this.options.baseUrl,
        apiKey: this.options.client.apiKey ?? '',
        ...(this.options.windowProbeFetch ? { fetch: this.options.windowProbeFetch } : {}),
      },
      model,
    );
  }

  chat(request: ChatRequest, controls: ChatControls): Promise<ChatReply> {
    const classify = this.options.classifyError ?? classifyModelError;
    const endpoint = { baseUrl: this.options.baseUrl, model: request.model };
    const { sampling = {}, tools = [] } = request;
    const effort = this.options.reasoningEffort;
    const body: OpenAI.Responses.ResponseCreateParamsStreaming = {
      model: request.model,
      input: toResponsesInput(request.messages),
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      ...(tools.length ? { tools: tools.map(toResponsesTool), tool_choice: request.toolChoice ?? 'auto' } : {}),
      ...(effort !== undefined
        ? { reasoning: { effort: effort as OpenAI.ReasoningEffort, summary: 'auto' } }
        : // Reasoning models refuse sampling settings; a reasoning effort says the model is one.
          {
            ...(sampling.temperature !== undefined ? { temperature: sampling.temperature } : {}),
            ...(sampling.topP !== undefined ? { top_p: sampling.topP } : {}),
          }),
      ...(sampling.maxOutputTokens !== undefined ? { max_output_tokens: sampling.maxOutputTokens } : {}),
    };
    const state: ResponseState = {
      items: new Map(),
      calls: new Map(),
      ...(sampling.maxOutputTokens !== undefined ? { maxOutputTokens: sampling.maxOutputTokens } : {}),
    };
    return readStreamedReply<ResponseStreamEvent>({
      controls,
      maxReplyBytes: this.options.maxReplyBytes ?? DEFAULT_REPLY_LIMITS.maxReplyBytes,
      streamBytesPerReplyByte: STREAM_BYTES_PER_REPLY_BYTE,
      classify: (error) => classify(error, endpoint),
      redactor: this.redactor,
      open: (signal) =>
        this.options.client.responses.create(body, {
          signal,
          headers: labelHeaders(request.labels),
        }),
      read: (event, reply) => readEvent(event, reply, state),
    });
  }
}

/** The output items as they are done, and which native tool call each function call item is. */
interface ResponseState {
  items: Map<number, unknown>;
  calls: Map<number, number>;
  /** The request's `max_output_tokens`, if it had one. */
  maxOutputTokens?: number;
}

/** Reads one stream event into the reply; false once the reply is too large. Throws a failed response's error. */
function readEvent(event: ResponseStreamEvent, reply: ReplyBuilder, state: ResponseState): boolean {
  switch (event.type) {
    case 'response.output_item.added': {
      const item = event.item;
      if (item.type !== 'function_call') return true;
      const call = state.calls.size;
      state.calls.set(event.output_index, call);
      return reply.addToolCall(call, { id: item.call_id, name: item.name, arguments: item.arguments });
    }
    case 'response.output_text.delta':
      return reply.addContent(event.delta);
    case 'response.reasoning_text.delta':
    case 'response.reasoning_summary_text.delta':
      return reply.addReasoning(event.delta);
    case 'response.function_call_arguments.delta': {
      const call = state.calls.get(event.output_index);
      return call === undefined ? true : reply.addToolCall(call, { arguments: event.delta });
    }
    case 'response.output_item.done': {
      state.items.set(event.output_index, event.item);
      if (event.item.type === 'reasoning') return reply.countOpaque(event.item.encrypted_content ?? '');
      return true;
    }
    case 'response.completed':
    case 'response.incomplete': {
      const response = event.response;
      reply.finishReason = finishReasonOfResponse(
        response.status,
        response.incomplete_details?.reason,
        state.calls.size > 0,
      );
      // A server that says `completed` at the output limit (llama-server does) was cut all the same:
      // no reply can be longer than the limit, so one that reached it was stopped there.
      const outputTokens = response.usage?.output_tokens;
      if (
        reply.finishReason !== 'length' &&
        state.maxOutputTokens !== undefined &&
        typeof outputTokens === 'number' &&
        outputTokens >= state.maxOutputTokens
      )
        reply.finishReason = 'length';
      if (response.usage) reply.usage = usageOf(response.usage);
      // The items as done; a server that sends none with their events has them in the response.
      const items = state.items.size
        ? [...state.items.entries()].sort(([left], [right]) => left - right).map(([, item]) => item)
        : response.output;
      const reasoning = reasoningState(items);
      if (reasoning) reply.provider = reasoning;
      return true;
    }
    case 'response.failed':
      throw failedResponse(event.response.error?.code, event.response.error?.message);
    default:
      return true;
  }
}

/** A failed response's error as the client's `APIError` with the status its code stands for, to be classified as any. */
function failedResponse(code: string | undefined, message: string | undefined): Error {
  const status =
    code === 'rate_limit_exceeded' ? 429 : code === 'context_length_exceeded' || code === 'invalid_prompt' ? 400 : 500;
  const said = message ?? `the response failed (${code ?? 'no code'})`;
  return new OpenAI.APIError(status, { code, message: said }, said, new Headers());
}

/** The Responses API's usage in the project's terms (its input tokens include the cached ones). */
export function usageOf(reported: ResponseUsage): ChatUsage {
  const cached = reported.input_tokens_details?.cached_tokens;
  const reasoningTokens = reported.output_tokens_details?.reasoning_tokens;
  return {
    promptTokens: reported.input_tokens,
    completionTokens: reported.output_tokens,
    ...(typeof cached === 'number' ? { cachedPromptTokens: cached } : {}),
    ...(typeof reasoningTokens === 'number' ? { reasoningTokens } : {}),
  };
}
