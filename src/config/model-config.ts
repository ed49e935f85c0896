import { DEFAULT_MAX_TOOL_CALLS_PER_REPLY, MAX_TOOL_CALLS_PER_REPLY_LIMIT } from '../core/protocols/tool-call-cap';
import { ConfigurationError } from './configuration-error';
import {
  checkedHttpUrl,
  readNumberInRange,
  readPositiveInteger,
  readPositiveNumber,
  readString,
  type Environment,
} from './environment-values';

/** The OpenAI-compatible endpoint and model used for every model call, read by {@link loadModelConfig}. */
export interface ModelConfig {
  /**
   * Base URL of an OpenAI-compatible chat-completions API.
   * `OPENAI_BASE_URL`; default `https://api.openai.com/v1`, but only when `OPENAI_API_KEY` is set.
   */
  baseUrl: string;
  /**
   * API key sent as the bearer token. `OPENAI_API_KEY`; when unset but `OPENAI_BASE_URL` is set
   * (a local llama-server, Ollama or vLLM) it is `'not-needed'`. Never logged or put in messages.
   */
  apiKey: string;
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
  const apiKeyValue = readString(environment, 'OPENAI_API_KEY');
  try {
    return readModelConfig(environment, apiKeyValue);
  } catch (error) {
    // Belt and braces: whatever a message quotes, it must not leak the key.
    if (error instanceof ConfigurationError && apiKeyValue !== undefined && error.message.includes(apiKeyValue)) {
      throw new ConfigurationError(error.variable, error.message.split(apiKeyValue).join('[redacted]'));
    }
    throw error;
  }
}

function readModelConfig(environment: Environment, apiKeyValue: string | undefined): ModelConfig {
  const baseUrlValue = readString(environment, 'OPENAI_BASE_URL');
  if (baseUrlValue === undefined && apiKeyValue === undefined) {
    throw new ConfigurationError('OPENAI_BASE_URL', NO_ENDPOINT_MESSAGE);
  }
  const baseUrl =
    baseUrlValue === undefined ? DEFAULT_OPENAI_BASE_URL : checkedHttpUrl('OPENAI_BASE_URL', baseUrlValue);
  const model = readString(environment, 'REACT_AGENT_MODEL') ?? readString(environment, 'OPENAI_MODEL');
  if (model === undefined) {
    throw new ConfigurationError(
      'REACT_AGENT_MODEL',
      `No model is named: set REACT_AGENT_MODEL (or OPENAI_MODEL) to a model that ${baseUrl} serves, ` +
        'for example REACT_AGENT_MODEL=gpt-4o-mini for OpenAI or REACT_AGENT_MODEL=Qwen/Qwen3-8B for vLLM.',
    );
  }
  return {
    baseUrl,
    apiKey: apiKeyValue ?? NO_API_KEY,
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
    maxAttempts: readPositiveInteger(environment, 'REACT_AGENT_MODEL_MAX_ATTEMPTS', DEFAULT_MODEL_MAX_ATTEMPTS),
    maxReplyBytes: readReplyLimit(environment, 'REACT_AGENT_MODEL_MAX_REPLY_BYTES', DEFAULT_MODEL_MAX_REPLY_BYTES),
    maxLineBytes: readReplyLimit(environment, 'REACT_AGENT_MODEL_MAX_LINE_BYTES', DEFAULT_MODEL_MAX_LINE_BYTES),
    temperature: readNumberInRange(environment, 'REACT_AGENT_TEMPERATURE', DEFAULT_TEMPERATURE, 0, 2),
    topP: readNumberInRange(environment, 'REACT_AGENT_TOP_P', DEFAULT_TOP_P, 0, 1),
    maxOutputTokens: readPositiveInteger(environment, 'REACT_AGENT_MAX_OUTPUT_TOKENS', DEFAULT_MAX_OUTPUT_TOKENS),
    maxToolCallsPerReply: readToolCallCap(environment),
  };
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
