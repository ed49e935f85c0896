/**
 * Recognises a model server's "the request does not fit the context window" refusal, so the
 * workflow can ask for the final answer instead of failing the run.
 *
 * Servers say it in different ways. Structured fields are checked first (they are stable
 * across releases), the message second (the only signal some servers give). Each entry names
 * the server family it is for; `test/unit/context-overflow.test.ts` checks every one against
 * the real error bodies in `test/fakes/model-server-error-bodies.ts`.
 */

/** What an OpenAI-compatible error response says, as the openai client exposes it. */
export interface ModelServerError {
  status: number;
  /** `error.code`: a string for OpenAI, the HTTP status (a number) for vLLM and llama-server. */
  code?: unknown;
  /** `error.type`. */
  type?: unknown;
  /** The client's message: the status and `error.message` (or the whole `error` when it is a string, as TGI sends it). */
  message: string;
}

/** Statuses a context overflow comes with: 400 (OpenAI, vLLM, llama-server, Ollama), 413, 422 (TGI). */
const OVERFLOW_STATUSES = new Set([400, 413, 422]);

/** `error.code` values that mean a context overflow. */
const OVERFLOW_CODES = new Set([
  // OpenAI (and the gateways that copy its errors, e.g. LiteLLM, OpenRouter).
  'context_length_exceeded',
]);

/** `error.type` values that mean a context overflow. */
const OVERFLOW_TYPES = new Set([
  // llama.cpp's llama-server (ERROR_TYPE_EXCEED_CONTEXT_SIZE in tools/server/server-common.cpp).
  'exceed_context_size_error',
]);

/** Message patterns, for servers whose errors carry no structured signal. */
const OVERFLOW_MESSAGES: ReadonlyArray<{ family: string; pattern: RegExp }> = [
  // OpenAI's wording, also used by vLLM before 2026: "This model's maximum context length is 8192 tokens. …"
  { family: 'OpenAI, vLLM', pattern: /maximum context length is \d+ tokens/i },
  // OpenAI's newer wording: "Your input exceeds the context window of this model."
  { family: 'OpenAI', pattern: /exceeds the context window/i },
  // vLLM's renderer check: "… However, the model's context length is only 4096 tokens, …"
  { family: 'vLLM', pattern: /context length is only \d+ tokens/i },
  // llama-server: "request (8199 tokens) exceeds the available context size (8192 tokens), …";
  // older releases: "input (N tokens) is larger than the max context size (M tokens)". Ollama
  // passes the first one through, wrapped in a string, when it does not truncate.
  {
    family: 'llama-server, Ollama',
    pattern: /exceeds the available context size|larger than the max context size|exceed_context_size_error/i,
  },
  // Ollama: "the prompt is longer than the context length currently available to the model; …"
  // and "the input length exceeds the context length".
  { family: 'Ollama', pattern: /prompt is longer than the context length|input length exceeds the context length/i },
  // Hugging Face TGI (422): "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. …"
  // and "Input validation error: `inputs` must have less than 1024 tokens. Given: 1872".
  { family: 'TGI', pattern: /`inputs` tokens \+ `max_new_tokens` must be <=|`inputs` must have less than \d+ tokens/i },
  // Anthropic-style gateways: "prompt is too long: 210000 tokens > 200000 maximum".
  { family: 'Anthropic-compatible', pattern: /prompt is too long/i },
  // Other OpenAI-compatible servers (SGLang, Together, …): "The input (N tokens) is longer than the
  // model's context length (M tokens).", "… exceeds the model's maximum context length of N".
  {
    family: 'other',
    pattern: /(?:longer than|exceeds?|exceeding)[^.]{0,40}context (?:length|window|size)|context length exceeded/i,
  },
];

/** Whether an error response from a model server says the request did not fit its context window. */
export function isContextOverflow(error: ModelServerError): boolean {
  if (!OVERFLOW_STATUSES.has(error.status)) return false;
  if (typeof error.code === 'string' && OVERFLOW_CODES.has(error.code)) return true;
  if (typeof error.type === 'string' && OVERFLOW_TYPES.has(error.type)) return true;
  return OVERFLOW_MESSAGES.some(({ pattern }) => pattern.test(error.message));
}
