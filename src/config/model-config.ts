import { DEFAULT_MAX_TOOL_CALLS_PER_REPLY, MAX_TOOL_CALLS_PER_REPLY_LIMIT } from '../core/protocols/tool-call-cap';
import { CONTEXT_WINDOW_CACHE_MS } from '../core/context-window';
import { ConfigurationError } from './configuration-error';
import {
  checkedHttpUrl,
  readNumberInRange,
  readPositiveInteger,
  readPositiveNumber,
  readString,
  type Environment,
} from './environment-values';

/** The model APIs a worker speaks (issue 31): `REACT_AGENT_MODEL_API`. */
export const MODEL_APIS = ['openai-chat', 'openai-responses', 'anthropic-messages'] as const;
export type ModelApi = (typeof MODEL_APIS)[number];
export const DEFAULT_MODEL_API: ModelApi = 'openai-chat';

/** The endpoint and model used for every model call, read by {@link loadModelConfig}. */
export interface ModelConfig {
  /**
   * The API spoken: `openai-chat` (Chat Completions: OpenAI, vLLM, Ollama, llama-server, gateways),
   * `openai-responses` (OpenAI's Responses API) or `anthropic-messages` (Anthropic's Messages API).
   * `REACT_AGENT_MODEL_API`; default `openai-chat`.
   */
  api: ModelApi;
  /**
   * Base URL of the API. The OpenAI APIs: `OPENAI_BASE_URL`; default `https://api.openai.com/v1`,
   * but only when `OPENAI_API_KEY` is set. Anthropic: `ANTHROPIC_BASE_URL` (without `/v1`); default
   * `https://api.anthropic.com`, but only when `ANTHROPIC_API_KEY` is set.
   */
  baseUrl: string;
  /**
   * API key. `OPENAI_API_KEY` (sent as the bearer token) or `ANTHROPIC_API_KEY` (`x-api-key`); when
   * unset but the base URL is set (a local llama-server, Ollama or vLLM) it is `'not-needed'`.
   * Never logged or put in messages.
   */
  apiKey: string;
  /**
   * Extended thinking's budget in tokens (`anthropic-messages` only; less than
   * REACT_AGENT_MAX_OUTPUT_TOKENS). `REACT_AGENT_THINKING_BUDGET_TOKENS`; default none (no `thinking`
   * parameter sent).
   */
  thinkingBudgetTokens?: number;
  /**
   * Reasoning effort (`openai-responses` only: `minimal`, `low`, `medium`, `high`).
   * `REACT_AGENT_REASONING_EFFORT`; default none (the model's own).
   */
  reasoningEffort?: string;
  /** Model name the endpoint serves. `REACT_AGENT_MODEL`, falling back to `OPENAI_MODEL`; required. */
  model: string;
  /** Start-to-close timeout of one model-call activity, in seconds. `REACT_AGENT_MODEL_TIMEOUT_SECONDS`; default 600. */
  timeoutSeconds: number;
  /**
   * Heartbeat timeout of a model-call activity, in seconds: how long Temporal waits for a sign of
   * life from an attempt before retrying it elsewhere. The activity heartbeats every 5 s while it
   * waits on the model, so this only has to outlast a busy worker's pauses; it is what a call lost
   * with a crashed worker, or recorded as started but never delivered to one (a busy dev server
   * does this, docs/figures.md "Scale"), costs before its retry. `REACT_AGENT_MODEL_HEARTBEAT_SECONDS`;
   * default 20.
   */
  heartbeatSeconds: number;
  /**
   * Longest gap between two chunks once the reply streams, in seconds: past it the call is
   * abandoned and retried (the activity keeps heartbeating meanwhile, so this may be longer than
   * the heartbeat timeout). `REACT_AGENT_MODEL_STALL_SECONDS`; default 60.
   */
  stallSeconds: number;
  /**
   * Longest wait for the reply's first chunk, in seconds: a server processing a long prompt sends
   * nothing (llama-server only SSE comment pings) until it generates the first token, and the
   * activity heartbeats meanwhile. Past this the call fails with `ReactAgent.Model.FirstTokenTimeout`
   * and is retried. The start-to-close timeout still bounds the whole call.
   * `REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS`; default 300.
   */
  firstTokenSeconds: number;
  /**
   * How long the worker keeps what the model server said of a model's context window, in seconds
   * (issue 34): runs opened meanwhile take it without asking the server again. 0 asks at every
   * run's start, as before. `REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS`; default 300, at most 86,400.
   */
  contextWindowCacheSeconds: number;
  /**
   * Longest reply text a model call takes, in UTF-8 bytes: content, reasoning and native tool
   * calls' names and arguments together. Past it the request is abandoned and the call fails
   * `ReactAgent.Model.ReplyTooLarge`, not retried (the run ends `error` saying so). The response
   * body as a whole may be 64 times this (the framing of every token).
   * `REACT_AGENT_MODEL_MAX_REPLY_BYTES`; default 1,048,576 (1 MiB).
   */
  maxReplyBytes: number;
  /**
   * Longest line of a model server's response body, in bytes (one SSE `data:` line: one chunk's
   * JSON); past it the same as {@link maxReplyBytes}. `REACT_AGENT_MODEL_MAX_LINE_BYTES`; default
   * 4,194,304 (4 MiB).
   */
  maxLineBytes: number;
  /** Maximum attempts of one model call (Temporal retry policy). `REACT_AGENT_MODEL_MAX_ATTEMPTS`; default 12. */
  maxAttempts: number;
  /** Sampling temperature, 0 to 2. `REACT_AGENT_TEMPERATURE`; default 0.6. */
  temperature: number;
  /** Nucleus-sampling probability mass, 0 to 1. `REACT_AGENT_TOP_P`; default 0.95. */
  topP: number;
  /** Maximum tokens the model may generate per call. `REACT_AGENT_MAX_OUTPUT_TOKENS`; default 10000. */
  maxOutputTokens: number;
  /**
   * Tool calls of one model reply that run (every protocol); the calls past them run nothing and
   * are answered "not run" (src/core/protocols/tool-call-cap.ts). `REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY`, an integer from 1 to 1000;
   * default 8.
   */
  maxToolCallsPerReply: number;
}

/** `OPENAI_BASE_URL` when only `OPENAI_API_KEY` is set. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** `ANTHROPIC_BASE_URL` when only `ANTHROPIC_API_KEY` is set. */
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** What `REACT_AGENT_REASONING_EFFORT` may be. */
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
/** `apiKey` for endpoints that need none (OPENAI_BASE_URL set, OPENAI_API_KEY not). */
export const NO_API_KEY = 'not-needed';

export const DEFAULT_MODEL_TIMEOUT_SECONDS = 600;
export const DEFAULT_MODEL_HEARTBEAT_SECONDS = 20;
export const DEFAULT_MODEL_STALL_SECONDS = 60;
export const DEFAULT_MODEL_FIRST_TOKEN_SECONDS = 300;
export const DEFAULT_MODEL_MAX_ATTEMPTS = 12;
export const DEFAULT_MODEL_MAX_REPLY_BYTES = 1024 * 1024;
export const DEFAULT_MODEL_MAX_LINE_BYTES = 4 * 1024 * 1024;
/** Below this, a limit on a reply's bytes or a stream's line would refuse ordinary replies. */
export const SMALLEST_REPLY_LIMIT_BYTES = 1024;
export const DEFAULT_TEMPERATURE = 0.6;
export const DEFAULT_TOP_P = 0.95;
export const DEFAULT_MAX_OUTPUT_TOKENS = 10000;

/** Printed when no endpoint is configured: a few short lines, one example per line. */
const NO_ENDPOINT_MESSAGE = [
  'No model endpoint is configured: neither OPENAI_BASE_URL nor OPENAI_API_KEY is set.',
  'Set OPENAI_BASE_URL to an OpenAI-compatible API (and OPENAI_API_KEY if that server needs one)',
  'and REACT_AGENT_MODEL to the model it serves. For OpenAI itself OPENAI_API_KEY is enough',
  '(OPENAI_BASE_URL defaults to https://api.openai.com/v1). For example:',
  '  OpenAI:        OPENAI_API_KEY=sk-... REACT_AGENT_MODEL=gpt-4o-mini',
  '  vLLM:          OPENAI_BASE_URL=http://localhost:8000/v1 REACT_AGENT_MODEL=Qwen/Qwen3-8B',
  '  Ollama:        OPENAI_BASE_URL=http://localhost:11434/v1 REACT_AGENT_MODEL=qwen3:8b',
  '  llama-server:  OPENAI_BASE_URL=http://localhost:8080/v1 REACT_AGENT_MODEL=local-model',
].join('\n');

/**
 * Reads the model endpoint and sampling settings from the environment and validates them.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable at fault (no endpoint, bad URL, no model, bad number).
 *   Messages never contain the API key.
 */
export function loadModelConfig(environment: Environment = process.env): ModelConfig {
  const api = readModelApi(environment, 'REACT_AGENT_MODEL_API', DEFAULT_MODEL_API);
  const apiKeyValue = readString(environment, apiVariables(api).apiKey);
  try {
    return readModelConfig(environment, api, apiKeyValue);
  } catch (error) {
    // Belt and braces: whatever a message quotes, it must not leak the key.
    if (error instanceof ConfigurationError && apiKeyValue !== undefined && error.message.includes(apiKeyValue)) {
      throw new ConfigurationError(error.variable, error.message.split(apiKeyValue).join('[redacted]'));
    }
    throw error;
  }
}

/** The variables an API's SDK reads for its endpoint and key. */
export function apiVariables(api: ModelApi): { baseUrl: string; apiKey: string; defaultBaseUrl: string } {
  return api === 'anthropic-messages'
    ? { baseUrl: 'ANTHROPIC_BASE_URL', apiKey: 'ANTHROPIC_API_KEY', defaultBaseUrl: DEFAULT_ANTHROPIC_BASE_URL }
    : { baseUrl: 'OPENAI_BASE_URL', apiKey: 'OPENAI_API_KEY', defaultBaseUrl: DEFAULT_OPENAI_BASE_URL };
}

/** A model API variable's value: one of {@link MODEL_APIS}, or `defaultValue` when unset. */
export function readModelApi(environment: Environment, name: string, defaultValue: ModelApi): ModelApi {
  const value = readString(environment, name);
  if (value === undefined) return defaultValue;
  if ((MODEL_APIS as readonly string[]).includes(value)) return value as ModelApi;
  throw new ConfigurationError(
    name,
    `${name} must be one of ${MODEL_APIS.join(', ')}, got ${JSON.stringify(value)}: openai-chat for Chat Completions (OpenAI, vLLM, Ollama, llama-server), openai-responses for OpenAI's Responses API, anthropic-messages for Claude.`,
  );
}

const NO_ANTHROPIC_ENDPOINT_MESSAGE = [
  'REACT_AGENT_MODEL_API=anthropic-messages, but neither ANTHROPIC_BASE_URL nor ANTHROPIC_API_KEY is set.',
  'For Anthropic itself ANTHROPIC_API_KEY is enough (ANTHROPIC_BASE_URL defaults to https://api.anthropic.com);',
  'for another server of the Messages API set ANTHROPIC_BASE_URL (without /v1), e.g. http://localhost:8080 for llama-server.',
].join('\n');

function readModelConfig(environment: Environment, api: ModelApi, apiKeyValue: string | undefined): ModelConfig {
  const variables = apiVariables(api);
  const baseUrlValue = readString(environment, variables.baseUrl);
  if (baseUrlValue === undefined && apiKeyValue === undefined) {
    throw new ConfigurationError(
      variables.baseUrl,
      api === 'anthropic-messages' ? NO_ANTHROPIC_ENDPOINT_MESSAGE : NO_ENDPOINT_MESSAGE,
    );
  }
  const baseUrl =
    baseUrlValue === undefined ? variables.defaultBaseUrl : checkedHttpUrl(variables.baseUrl, baseUrlValue);
  const model = readString(environment, 'REACT_AGENT_MODEL') ?? readString(environment, 'OPENAI_MODEL');
  if (model === undefined) {
    throw new ConfigurationError(
      'REACT_AGENT_MODEL',
      `No model is named: set REACT_AGENT_MODEL (or OPENAI_MODEL) to a model that ${baseUrl} serves, ` +
        'for example REACT_AGENT_MODEL=gpt-4o-mini for OpenAI or REACT_AGENT_MODEL=Qwen/Qwen3-8B for vLLM.',
    );
  }
  const maxOutputTokens = readPositiveInteger(environment, 'REACT_AGENT_MAX_OUTPUT_TOKENS', DEFAULT_MAX_OUTPUT_TOKENS);
  const thinkingBudgetTokens = readThinkingBudget(environment, maxOutputTokens);
  const reasoningEffort = readReasoningEffort(environment);
  return {
    api,
    baseUrl,
    apiKey: apiKeyValue ?? NO_API_KEY,
    ...(thinkingBudgetTokens !== undefined ? { thinkingBudgetTokens } : {}),
    ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
    model,
    timeoutSeconds: readPositiveNumber(environment, 'REACT_AGENT_MODEL_TIMEOUT_SECONDS', DEFAULT_MODEL_TIMEOUT_SECONDS),
    heartbeatSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_MODEL_HEARTBEAT_SECONDS',
      DEFAULT_MODEL_HEARTBEAT_SECONDS,
    ),
    stallSeconds: readPositiveNumber(environment, 'REACT_AGENT_MODEL_STALL_SECONDS', DEFAULT_MODEL_STALL_SECONDS),
    firstTokenSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS',
      DEFAULT_MODEL_FIRST_TOKEN_SECONDS,
    ),
    contextWindowCacheSeconds: readNumberInRange(
      environment,
      'REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS',
      CONTEXT_WINDOW_CACHE_MS / 1000,
      0,
      86_400,
    ),
    maxAttempts: readPositiveInteger(environment, 'REACT_AGENT_MODEL_MAX_ATTEMPTS', DEFAULT_MODEL_MAX_ATTEMPTS),
    maxReplyBytes: readReplyLimit(environment, 'REACT_AGENT_MODEL_MAX_REPLY_BYTES', DEFAULT_MODEL_MAX_REPLY_BYTES),
    maxLineBytes: readReplyLimit(environment, 'REACT_AGENT_MODEL_MAX_LINE_BYTES', DEFAULT_MODEL_MAX_LINE_BYTES),
    temperature: readNumberInRange(environment, 'REACT_AGENT_TEMPERATURE', DEFAULT_TEMPERATURE, 0, 2),
    topP: readNumberInRange(environment, 'REACT_AGENT_TOP_P', DEFAULT_TOP_P, 0, 1),
    maxOutputTokens,
    maxToolCallsPerReply: readToolCallCap(environment),
  };
}

function readThinkingBudget(environment: Environment, maxOutputTokens: number): number | undefined {
  const name = 'REACT_AGENT_THINKING_BUDGET_TOKENS';
  if (readString(environment, name) === undefined) return undefined;
  const value = readPositiveInteger(environment, name, 0);
  if (value < 1024 || value >= maxOutputTokens)
    throw new ConfigurationError(
      name,
      `${name} must be at least 1024 and less than REACT_AGENT_MAX_OUTPUT_TOKENS (${maxOutputTokens}), got ${value}: Anthropic's thinking budget is part of max_tokens.`,
    );
  return value;
}

function readReasoningEffort(environment: Environment): string | undefined {
  const name = 'REACT_AGENT_REASONING_EFFORT';
  const value = readString(environment, name);
  if (value === undefined || (REASONING_EFFORTS as readonly string[]).includes(value)) return value;
  throw new ConfigurationError(
    name,
    `${name} must be one of ${REASONING_EFFORTS.join(', ')}, got ${JSON.stringify(value)}.`,
  );
}

function readToolCallCap(environment: Environment): number {
  const name = 'REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY';
  const value = readPositiveInteger(environment, name, DEFAULT_MAX_TOOL_CALLS_PER_REPLY);
  if (value > MAX_TOOL_CALLS_PER_REPLY_LIMIT)
    throw new ConfigurationError(
      name,
      `${name} must be an integer from 1 to ${MAX_TOOL_CALLS_PER_REPLY_LIMIT}, got ${JSON.stringify(String(value))}`,
    );
  return value;
}

/** A byte limit on replies: a whole number of at least {@link SMALLEST_REPLY_LIMIT_BYTES}. */
function readReplyLimit(environment: Environment, name: string, defaultValue: number): number {
  const value = readPositiveInteger(environment, name, defaultValue);
  if (value < SMALLEST_REPLY_LIMIT_BYTES)
    throw new ConfigurationError(name, `${name} must be at least ${SMALLEST_REPLY_LIMIT_BYTES} (bytes), got ${value}.`);
  return value;
}
