/**
 * A scripted, OpenAI-compatible chat-completions HTTP server for integration tests and benchmarks.
 *
 * No real model is available offline, so tests start this server on 127.0.0.1, point the real
 * `openai` client at {@link ScriptedModelServer.baseUrl}, and decide every reply with a
 * {@link Script}. The server speaks both non-streaming JSON and streaming SSE, applies `stop`
 * sequences like a real server, can answer with HTTP errors, delays and stalled streams, and
 * records every request it received.
 *
 * It also has the habits of real servers that clients trip over (issue 8): llama-server's stream
 * shape (`dialect: 'llama-server'`), reasoning streamed apart from the content
 * (`reasoning_content` or `reasoning`), SSE comment pings while it "processes the prompt"
 * (`promptProcessingMs`), servers' own error bodies (`errorBody`, see
 * `model-server-error-bodies.ts`), and llama-server's refusal of a history tool call whose
 * arguments are not JSON (HTTP 500; on unless `acceptInvalidToolCallArguments`).
 *
 * With a context window (`contextWindow`, or `setContextWindow`) it says the window where one
 * server family says it (llama-server's `GET /props` by default; vLLM's `/v1/models`, Ollama's
 * `/api/ps` and `/api/show`, or nowhere) and refuses a prompt longer than the window with
 * llama-server's HTTP 400 `exceed_context_size_error` (issue 16).
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { anthropicStream, responsesStream } from './model-api-streams';
import { PromptCache } from './prompt-cache';
import { llamaServerContextOverflowBody, llamaServerInvalidToolArgumentsBody } from './model-server-error-bodies';

/** Name of the one model `GET /v1/models` lists. */
export const SCRIPTED_MODEL_NAME = 'scripted-model';

/** Request header carrying the workflow id of the run that made the model call. */
export const WORKFLOW_ID_HEADER = 'x-react-agent-workflow-id';

/** Request header carrying the workflow's 1-based model call number. */
export const MODEL_CALL_HEADER = 'x-react-agent-model-call';

/** What the server answers to one chat-completions request. */
export interface ScriptedReply {
  /** Assistant text content to return. Default ''. */
  content?: string;
  /** Native tool calls to return (sent in OpenAI shape: id, type 'function', function {name, arguments}). */
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  /** HTTP status to answer with instead of a completion (e.g. 429, 500, 401, 400). */
  status?: number;
  /** Error message used with `status` (sent in OpenAI error shape: {error: {message, type, code}}). */
  errorMessage?: string;
  /** Error code used with `status`; for a context-length error use 'context_length_exceeded'. */
  errorCode?: string;
  /** Extra response headers, e.g. {'retry-after': '2'}. */
  headers?: Record<string, string>;
  /** Number of stream chunks to split content into (default: one chunk per 20 characters, at least 1). */
  chunks?: number;
  /** Delay before the first byte in ms (default 0). Applies to every kind of answer. */
  delayBeforeFirstChunkMs?: number;
  /** Delay between stream chunks in ms (default 0). */
  delayBetweenChunksMs?: number;
  /**
   * Each {@link SEND_TIME_PLACEHOLDER} in a stream event is replaced, as the event is written, by
   * the time it is sent (`Date.now()`, 13 digits): for measuring how long text takes to reach a
   * reader (`npm run benchmark:stream`). Default false.
   */
  stampSendTime?: boolean;
  /**
   * After sending this many SSE events (the first, role-only event counts as one), stop sending
   * and hold the connection open until the client disconnects. 0 stalls right after the response
   * headers; a value at or beyond the number of events stalls just before `data: [DONE]`.
   * For a non-streaming request any value means: never answer.
   */
  stallAfterChunks?: number;
  /** Prompt tokens to report; default ceil(total characters of all request message contents / 4). */
  promptTokens?: number;
  /** Completion tokens to report; default ceil(returned content length / 4). */
  completionTokens?: number;
  /** Of the prompt tokens, those to report as cached (`usage.prompt_tokens_details.cached_tokens`); default none reported. */
  cachedPromptTokens?: number;
  /** finish_reason, default 'stop' (or 'tool_calls' when toolCalls given). */
  finishReason?: string;
  /** Streams only: every `INVALID_UTF8_MARKER` in the content is sent as the raw invalid UTF-8 bytes 0xC3 0x28. */
  invalidUtf8?: boolean;
  /**
   * Reasoning to return apart from the content, streamed before it (llama-server with a thinking
   * template, DeepSeek, vLLM's reasoning parsers, Ollama). Not cut by `stop` sequences.
   */
  reasoning?: string;
  /**
   * With `reasoning`, on the other APIs (issue 31): the thinking block's `signature`
   * (`/v1/messages`) or the reasoning item's `encrypted_content` (`/v1/responses`). Default
   * `sig-<sequence>` / `enc-<sequence>`.
   */
  reasoningSignature?: string;
  /** `/v1/messages` only: of the prompt tokens, those reported as written to the cache (`cache_creation_input_tokens`). Default 0. */
  cacheWriteTokens?: number;
  /** The field that carries `reasoning`: `reasoning_content` (llama-server, DeepSeek; default) or `reasoning` (vLLM, Ollama). */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /**
   * Whose stream shape to copy. `openai` (default): a first chunk with `role` and `content: ''`,
   * `refusal` and `logprobs` fields, `usage: null` on every chunk when usage was asked for.
   * `llama-server`: a first chunk with `role` and `content: null`, no `refusal`/`logprobs`, no
   * `usage` on content chunks; the usage chunk (`choices: []`) after the finish chunk, as both send.
   */
  dialect?: 'openai' | 'llama-server';
  /**
   * Streams only: after the response headers, send only SSE comment pings (`:`) for this long
   * before the first chunk, as llama-server does while it processes a long prompt. The openai
   * client does not surface pings as chunks. Default 0.
   */
  promptProcessingMs?: number;
  /** Time between those pings in ms; default 1000 (llama-server's `--sse-ping-interval` is 30 s). */
  pingIntervalMs?: number;
  /** With `status`: the JSON body to answer with, as a real server sends it (overrides `errorMessage`/`errorCode`). */
  errorBody?: unknown;
  /**
   * Streams only, a hostile or broken server (issue 28): instead of the reply, `data: {"x":"`
   * followed by this many bytes of `a` and no newline, written as fast as the client reads them;
   * then the response ends.
   */
  endlessLineBytes?: number;
}

/** Placeholder in `content` replaced on the wire by invalid UTF-8 when `invalidUtf8` is set. */
export const INVALID_UTF8_MARKER = '<<INVALID_UTF8>>';

/** The APIs the server speaks: Chat Completions, Anthropic's Messages API, OpenAI's Responses API (issue 31). */
export type ScriptedApi = 'openai-chat' | 'anthropic-messages' | 'openai-responses';

/** One model request as the script sees it. */
export interface ScriptedRequest {
  /** Sequence number over the server's lifetime, from 1. */
  sequence: number;
  /** Which API it came to: `POST /v1/chat/completions`, `/v1/messages` or `/v1/responses`. */
  api: ScriptedApi;
  /** Value of the `x-react-agent-workflow-id` request header, if any. */
  workflowId?: string;
  /** Value of the `x-react-agent-model-call` header parsed as an integer, if any. */
  modelCall?: number;
  /** Value of the `x-react-agent-purpose` header, if any: `summary` for compression's summary requests. */
  purpose?: string;
  /** Parsed JSON body as sent (model, messages, stop, stream, tools, max_tokens, ...). */
  body: any;
  /**
   * Messages of the request (empty when the body had none). For `/v1/responses`, its input items
   * as messages: an assistant turn's reasoning, text and function_call items one `assistant`
   * message (its items in `items`), a function_call_output a `tool` message.
   */
  messages: Array<{ role: string; content: unknown; [key: string]: unknown }>;
  /** Authorization header value (to check API keys are sent). */
  authorization?: string;
}

/** A received request plus what became of it; updated in place while the response is written. */
export interface ScriptedRequestRecord extends ScriptedRequest {
  /** `Date.now()` when the request body had been read. */
  receivedAt: number;
  /** True once the whole response (including the final `data: [DONE]` for streams) was written and ended. */
  completed: boolean;
  /** True if the client disconnected before completion. */
  aborted: boolean;
  /** HTTP status answered; 0 until the script has replied. */
  status: number;
  /** With a tokens-per-minute limit: the tokens (prompt + completion) the answer used, charged to the limit. */
  tokens?: number;
}

/** Decides the reply to each chat-completions request. A thrown error becomes a 500 answer. */
export type Script = (request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>;

/** Options of {@link ScriptedModelServer.start}. */
export interface ScriptedModelServerOptions {
  /** Decides every reply; can be replaced later with {@link ScriptedModelServer.setScript}. */
  script: Script;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port to listen on; default 0 (a free port). */
  port?: number;
  /**
   * Accept a history tool call whose `arguments` is not a JSON object. Default false: such a
   * request is refused with llama-server's HTTP 500 ("Failed to parse tool call arguments as
   * JSON"), without asking the script, as llama-server refuses it.
   */
  acceptInvalidToolCallArguments?: boolean;
  /** The context window in tokens: prompts longer than this are refused (llama-server's 400). Default none. */
  contextWindow?: number;
  /** Where the window is said: see {@link WindowEndpoint}. Default 'llama-server'. */
  windowEndpoint?: WindowEndpoint;
  /**
   * `/v1/messages` only: play Anthropic's prompt cache (`prompt-cache.ts`): each reply's prompt
   * tokens, cache reads and cache writes come from the request's blocks and `cache_control`
   * breakpoints, unless the reply names them. Default false.
   */
  promptCache?: boolean;
  /**
   * A provider's tokens-per-minute limit (issue 33): a token bucket of this many tokens, refilled
   * continuously over a minute, charged each answer's prompt + completion tokens as its usage
   * reports them; a request that does not fit gets a 429 with `retry-after` (whole seconds until
   * it would fit). Default none.
   */
  tokensPerMinute?: number;
}

/**
 * Which server family's endpoint says the window: llama-server's `GET /props`
 * (`default_generation_settings.n_ctx`), vLLM's `GET /v1/models` (`max_model_len`), Ollama's
 * `GET /api/ps` (`context_length`) and `POST /api/show` (`num_ctx`), or none (the window is
 * only found out from a refusal).
 */
export type WindowEndpoint = 'llama-server' | 'vllm' | 'ollama' | 'none';

/** A request to one of the endpoints that say a window (`/props`, `/v1/models`, `/api/ps`, `/api/show`). */
export interface WindowProbe {
  method: string;
  path: string;
  status: number;
}

/** Number of messages with role 'assistant' in `messages` (0 for anything that is not an array). */
export function countAssistantMessages(messages: ReadonlyArray<{ role?: unknown }> | undefined): number {
  if (!Array.isArray(messages)) return 0;
  return messages.filter((message) => message !== null && typeof message === 'object' && message.role === 'assistant')
    .length;
}

/**
 * A script for sequential runs: the reply is chosen by how many assistant messages the request
 * already carries (turn index = that count). With an array, turn index i gets `turns[i]`, and the
 * last element once the turns run out. With a function, it is called with
 * `modelCall = turn index + 1` (the 1-based model call number of a run in which every model call
 * appended one assistant message) and the request.
 */
export function scriptFromTurns(
  turns: ScriptedReply[] | ((modelCall: number, request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>),
): Script {
  if (typeof turns === 'function') {
    return (request) => turns(countAssistantMessages(request.messages) + 1, request);
  }
  if (turns.length === 0) throw new Error('scriptFromTurns needs at least one reply.');
  const replies = [...turns];
  return (request) => {
    const turnIndex = countAssistantMessages(request.messages);
    return replies[Math.min(turnIndex, replies.length - 1)] as ScriptedReply;
  };
}

/** A Responses request's input items as messages (see {@link ScriptedRequest.messages}). */
export function messagesOfResponsesInput(input: unknown): ScriptedRequest['messages'] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: ScriptedRequest['messages'] = [];
  for (const item of Array.isArray(input) ? (input as Array<Record<string, unknown>>) : []) {
    if (item.role === 'assistant' || item.type === 'reasoning' || item.type === 'function_call') {
      const last = messages.at(-1);
      if (last?.role === 'assistant') (last.items as unknown[]).push(item);
      else messages.push({ role: 'assistant', content: '', items: [item] });
      if (item.role === 'assistant') (messages.at(-1) as { content: unknown }).content = item.content;
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', content: item.output, tool_call_id: item.call_id });
    } else {
      messages.push({ ...item, role: String(item.role), content: item.content });
    }
  }
  return messages;
}

/** Cuts `content` at the first occurrence of any stop string (the stop string itself excluded). */
export function applyStopSequences(content: string, stop: unknown): string {
  const stopStrings = (typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : []).filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length > 0,
  );
  let cutAt = content.length;
  for (const stopString of stopStrings) {
    const index = content.indexOf(stopString);
    if (index !== -1 && index < cutAt) cutAt = index;
  }
  return content.slice(0, cutAt);
}

/** Characters of a message content: a string's length, or the summed `text` of content parts. */
function contentCharacters(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (Array.isArray(content)) {
    return content.reduce<number>((total, part) => {
      const text: unknown = part !== null && typeof part === 'object' ? (part as { text?: unknown }).text : undefined;
      return total + (typeof text === 'string' ? text.length : 0);
    }, 0);
  }
  return 0;
}

/** Splits `text` into `count` nearly equal pieces (no empty pieces unless `text` is empty). */
/** Replaced by the send time in ms in a streamed event when {@link ScriptedReply.stampSendTime} is set (as long as the time: 13 characters). */
export const SEND_TIME_PLACEHOLDER = '@@@@@@@@@@@@@';

function splitIntoPieces(text: string, count: number): string[] {
  const pieceCount = Math.max(1, Math.min(Math.floor(count), Math.max(1, text.length)));
  const pieces: string[] = [];
  for (let index = 0; index < pieceCount; index += 1) {
    pieces.push(
      text.slice(Math.floor((index * text.length) / pieceCount), Math.floor(((index + 1) * text.length) / pieceCount)),
    );
  }
  return pieces;
}

/**
 * Why the first history tool call whose `arguments` is not valid JSON fails to parse, or
 * undefined when every one parses (llama-server's check, common/chat.cpp `func_args_not_string`).
 */
export function invalidToolCallArguments(messages: ReadonlyArray<Record<string, unknown>>): string | undefined {
  for (const message of messages) {
    if (!Array.isArray(message?.tool_calls)) continue;
    for (const call of message.tool_calls as Array<{ function?: { arguments?: unknown } }>) {
      const args = call?.function?.arguments;
      if (typeof args !== 'string') continue;
      try {
        JSON.parse(args);
      } catch (error) {
        return `${(error as Error).message} in ${JSON.stringify(args)}`;
      }
    }
  }
  return undefined;
}

/** OpenAI error `type` for an HTTP status. */
function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Resolves after `milliseconds`, or early (without error) when `signal` aborts. */
function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  if (milliseconds <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `response` can take more, or is closed. */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/** Resolves when `signal` aborts. */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

interface RequestWaiter {
  predicate: (record: ScriptedRequestRecord) => boolean;
  resolve: (record: ScriptedRequestRecord) => void;
}

/**
 * An OpenAI-compatible chat-completions server whose replies come from a {@link Script}.
 * Routes: `POST /v1/chat/completions`, `POST /v1/messages` (Anthropic's Messages API, streamed),
 * `POST /v1/responses` (OpenAI's Responses API, streamed), `GET /v1/models`; anything else is a 404 JSON error, and a
 * body that is not a JSON object is a 400 (such requests are not recorded).
 */
export class ScriptedModelServer {
  /** Base URL for the openai client, e.g. http://127.0.0.1:PORT/v1. */
  readonly baseUrl: string;
  /** Base URL for the Anthropic client (no `/v1`), e.g. http://127.0.0.1:PORT. */
  get origin(): string {
    return this.baseUrl.replace(/\/v1$/, '');
  }
  /** Port the server listens on. */
  readonly port: number;
  /** All chat-completions requests in order of arrival. */
  readonly requests: ScriptedRequestRecord[] = [];

  /** Requests to the endpoints that say a context window, in order. */
  readonly windowProbes: WindowProbe[] = [];

  private script: Script;
  private contextWindow: number | undefined;
  private windowEndpoint: WindowEndpoint = 'llama-server';
  private readonly acceptInvalidToolCallArguments: boolean;
  /** The tokens-per-minute bucket, when the server enforces one ({@link ScriptedModelServerOptions.tokensPerMinute}). */
  private tokenLimit: { perMinute: number; level: number; asOf: number } | undefined;
  /** Anthropic's prompt cache, when played ({@link ScriptedModelServerOptions.promptCache}). */
  promptCache: PromptCache | undefined;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly waiters = new Set<RequestWaiter>();
  /** Responses not yet closed, each with a promise that settles on its 'close' event. */
  private readonly openResponses = new Map<ServerResponse, Promise<void>>();
  private closing: Promise<void> | undefined;

  private constructor(
    server: Server,
    script: Script,
    host: string,
    port: number,
    acceptInvalidToolCallArguments: boolean,
  ) {
    this.server = server;
    this.script = script;
    this.acceptInvalidToolCallArguments = acceptInvalidToolCallArguments;
    this.port = port;
    this.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  }

  /** Starts a server listening on `options.host` (127.0.0.1) and `options.port` (a free port). */
  static async start(options: ScriptedModelServerOptions): Promise<ScriptedModelServer> {
    const host = options.host ?? '127.0.0.1';
    let instance: ScriptedModelServer | undefined;
    const pendingSockets: Socket[] = [];
    const server = createServer((request, response) => {
      if (!instance) {
        response.writeHead(503).end();
        return;
      }
      instance.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent && !response.destroyed) {
          instance?.sendError(
            response,
            500,
            `Scripted model server failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        } else {
          response.destroy();
        }
      });
    });
    server.on('connection', (socket: Socket) => {
      if (instance) instance.trackSocket(socket);
      else pendingSockets.push(socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    instance = new ScriptedModelServer(
      server,
      options.script,
      host,
      address.port,
      options.acceptInvalidToolCallArguments ?? false,
    );
    instance.setContextWindow(options.contextWindow, options.windowEndpoint);
    if (options.promptCache) instance.promptCache = new PromptCache();
    instance.setTokensPerMinute(options.tokensPerMinute);
    for (const socket of pendingSockets) instance.trackSocket(socket);
    return instance;
  }

  /** Sets (or, with undefined, removes) the context window and where it is said; requests that arrive afterwards see it. */
  setContextWindow(tokens: number | undefined, endpoint: WindowEndpoint = 'llama-server'): void {
    this.contextWindow = tokens;
    this.windowEndpoint = endpoint;
  }

  /** Sets (or, with undefined, removes) the tokens-per-minute limit; the bucket starts full. */
  setTokensPerMinute(perMinute: number | undefined): void {
    this.tokenLimit = perMinute === undefined ? undefined : { perMinute, level: perMinute, asOf: Date.now() };
  }

  /**
   * Charges `tokens` to the tokens-per-minute bucket: undefined when they fit (taken), else the
   * seconds until they would (nothing taken).
   */
  private chargeTokens(tokens: number): number | undefined {
    const limit = this.tokenLimit;
    if (!limit) return undefined;
    const now = Date.now();
    const perMs = limit.perMinute / 60_000;
    limit.level = Math.min(limit.perMinute, limit.level + (now - limit.asOf) * perMs);
    limit.asOf = now;
    if (limit.level >= tokens) {
      limit.level -= tokens;
      return undefined;
    }
    return Math.max(1, Math.ceil((tokens - limit.level) / perMs / 1000));
  }

  /** Replaces the script; requests that arrive afterwards use the new one. */
  setScript(script: Script): void {
    this.script = script;
  }

  /**
   * Resolves with the first request record matching `predicate`; already-received records count,
   * and records are re-checked whenever they change (e.g. become completed or aborted). Rejects
   * after `timeoutMs` (default 30 s).
   */
  waitForRequest(
    predicate: (record: ScriptedRequestRecord) => boolean,
    timeoutMs = 30_000,
  ): Promise<ScriptedRequestRecord> {
    const existing = this.requests.find(predicate);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve, reject) => {
      const waiter: RequestWaiter = {
        predicate,
        resolve: (record) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(record);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `No matching request to the scripted model server within ${timeoutMs} ms (${this.requests.length} received).`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Stops accepting connections and destroys open ones (stalled streams included). */
  close(): Promise<void> {
    if (!this.closing) {
      const serverClosed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      const responsesClosed = Promise.all(this.openResponses.values());
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
      // Waiting for the responses too means records of cut-off streams already say `aborted`.
      this.closing = Promise.all([serverClosed, responsesClosed]).then(() => undefined);
    }
    return this.closing;
  }

  private trackSocket(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private notifyWaiters(record: ScriptedRequestRecord): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(record)) waiter.resolve(record);
    }
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.openResponses.set(
      response,
      new Promise<void>((resolve) =>
        response.once('close', () => {
          this.openResponses.delete(response);
          resolve();
        }),
      ),
    );
    const path = (request.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
    if (this.answerWindowProbe(request, response, path)) return;
    if (request.method === 'GET' && path === '/v1/models') {
      this.sendJson(response, 200, {
        object: 'list',
        data: [{ id: SCRIPTED_MODEL_NAME, object: 'model', created: 0, owned_by: 'scripted-model-server' }],
      });
      return;
    }
    const api: ScriptedApi | undefined =
      path === '/v1/chat/completions'
        ? 'openai-chat'
        : path === '/v1/messages'
          ? 'anthropic-messages'
          : path === '/v1/responses'
            ? 'openai-responses'
            : undefined;
    if (request.method !== 'POST' || api === undefined) {
      request.resume();
      this.sendError(response, 404, `No route for ${request.method ?? '?'} ${request.url ?? ''}`, 'not_found');
      return;
    }

    const disconnect = new AbortController();
    let record: ScriptedRequestRecord | undefined;
    response.once('close', () => {
      if (!response.writableFinished) {
        disconnect.abort();
        if (record && !record.completed) {
          record.aborted = true;
          this.notifyWaiters(record);
        }
      }
    });

    const rawBody = await readBody(request);
    let body: any;
    try {
      body = JSON.parse(rawBody);
    } catch {
      this.sendError(response, 400, 'The request body is not valid JSON.', 'invalid_json');
      return;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      this.sendError(response, 400, 'The request body must be a JSON object.', 'invalid_json');
      return;
    }

    const workflowHeader = request.headers[WORKFLOW_ID_HEADER];
    const modelCallHeader = request.headers[MODEL_CALL_HEADER];
    const modelCall = typeof modelCallHeader === 'string' ? Number.parseInt(modelCallHeader, 10) : Number.NaN;
    const scriptedRequest: ScriptedRequest = {
      sequence: this.requests.length + 1,
      api,
      ...(typeof workflowHeader === 'string' ? { workflowId: workflowHeader } : {}),
      ...(Number.isFinite(modelCall) ? { modelCall } : {}),
      ...(typeof request.headers['x-react-agent-purpose'] === 'string'
        ? { purpose: request.headers['x-react-agent-purpose'] }
        : {}),
      body,
      messages:
        api === 'openai-responses'
          ? messagesOfResponsesInput(body.input)
          : Array.isArray(body.messages)
            ? body.messages
            : [],
      ...(typeof request.headers.authorization === 'string' ? { authorization: request.headers.authorization } : {}),
    };
    const currentRecord: ScriptedRequestRecord = {
      ...scriptedRequest,
      receivedAt: Date.now(),
      completed: false,
      aborted: disconnect.signal.aborted,
      status: 0,
    };
    record = currentRecord;
    this.requests.push(currentRecord);
    this.notifyWaiters(currentRecord);

    const unparsableArguments = this.acceptInvalidToolCallArguments
      ? undefined
      : invalidToolCallArguments(scriptedRequest.messages);
    if (unparsableArguments !== undefined) {
      currentRecord.status = 500;
      this.sendJson(response, 500, llamaServerInvalidToolArgumentsBody(unparsableArguments));
      this.finish(currentRecord, response);
      return;
    }

    let reply: ScriptedReply;
    try {
      reply = await this.script({ ...scriptedRequest });
    } catch (error) {
      currentRecord.status = 500;
      this.sendError(response, 500, `The script threw: ${error instanceof Error ? error.message : String(error)}`);
      this.finish(currentRecord, response);
      return;
    }

    await sleep(reply.delayBeforeFirstChunkMs ?? 0, disconnect.signal);
    if (disconnect.signal.aborted) return;

    const countedPromptTokens =
      reply.promptTokens ??
      Math.ceil(
        scriptedRequest.messages.reduce((total, message) => total + contentCharacters(message?.content), 0) / 4,
      );
    if (
      (reply.status === undefined || reply.status === 200) &&
      this.contextWindow !== undefined &&
      countedPromptTokens > this.contextWindow
    ) {
      // llama-server refuses a prompt longer than its context before generating anything.
      currentRecord.status = 400;
      this.sendJson(response, 400, llamaServerContextOverflowBody(countedPromptTokens, this.contextWindow));
      this.finish(currentRecord, response);
      return;
    }

    if (reply.status !== undefined && reply.status !== 200) {
      currentRecord.status = reply.status;
      if (reply.errorBody !== undefined) this.sendJson(response, reply.status, reply.errorBody, reply.headers);
      else
        this.sendError(
          response,
          reply.status,
          reply.errorMessage ?? `Scripted error ${reply.status}`,
          reply.errorCode,
          reply.headers,
        );
      this.finish(currentRecord, response);
      return;
    }
    const content = applyStopSequences(reply.content ?? '', body.stop ?? body.stop_sequences);
    if (this.tokenLimit) {
      const tokens =
        countedPromptTokens +
        (reply.completionTokens ?? Math.ceil(((reply.reasoning ?? '').length + content.length) / 4));
      const retryAfterSeconds = this.chargeTokens(tokens);
      if (retryAfterSeconds !== undefined) {
        currentRecord.status = 429;
        this.sendError(response, 429, 'Rate limit reached for tokens per minute.', 'rate_limit_exceeded', {
          'retry-after': String(retryAfterSeconds),
        });
        this.finish(currentRecord, response);
        return;
      }
      currentRecord.tokens = tokens;
    }
    currentRecord.status = 200;

    const toolCalls = reply.toolCalls ?? [];
    const finishReason = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    const promptTokens = countedPromptTokens;
    const reasoning = reply.reasoning ?? '';
    const reasoningField = reply.reasoningField ?? 'reasoning_content';
    const llamaServer = reply.dialect === 'llama-server';
    const completionTokens = reply.completionTokens ?? Math.ceil((reasoning.length + content.length) / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      ...(reply.cachedPromptTokens !== undefined
        ? { prompt_tokens_details: { cached_tokens: reply.cachedPromptTokens } }
        : {}),
    };
    const identity = {
      id: `chatcmpl-scripted-${scriptedRequest.sequence}`,
      created: Math.floor(currentRecord.receivedAt / 1000),
      model: typeof body.model === 'string' ? body.model : SCRIPTED_MODEL_NAME,
    };

    if (body.stream !== true) {
      if (reply.stallAfterChunks !== undefined) {
        await untilAborted(disconnect.signal);
        return;
      }
      this.sendJson(
        response,
        200,
        {
          ...identity,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: content === '' && toolCalls.length > 0 ? null : content,
                ...(reasoning ? { [reasoningField]: reasoning } : {}),
                refusal: null,
                ...(toolCalls.length > 0
                  ? {
                      tool_calls: toolCalls.map((call) => ({
                        id: call.id,
                        type: 'function',
                        function: { name: call.name, arguments: call.arguments },
                      })),
                    }
                  : {}),
              },
              logprobs: null,
              finish_reason: finishReason,
            },
          ],
          usage,
        },
        reply.headers,
      );
      this.finish(currentRecord, response);
      return;
    }

    if (api !== 'openai-chat') {
      const signature =
        reply.reasoningSignature ?? `${api === 'anthropic-messages' ? 'sig' : 'enc'}-${scriptedRequest.sequence}`;
      const cache = api === 'anthropic-messages' ? this.promptCache?.use(body) : undefined;
      const cached = reply.cachedPromptTokens ?? cache?.cacheReadTokens ?? 0;
      const written = reply.cacheWriteTokens ?? cache?.cacheWriteTokens ?? 0;
      const prompt = reply.promptTokens ?? cache?.promptTokens ?? promptTokens;
      const stream =
        api === 'anthropic-messages'
          ? anthropicStream({
              ...(reasoning ? { thinking: { text: reasoning, signature } } : {}),
              ...(content ? { text: content } : {}),
              toolUses: toolCalls.map((call) => ({
                id: call.id,
                name: call.name,
                input: JSON.parse(call.arguments) as Record<string, unknown>,
              })),
              stopReason:
                finishReason === 'length' ? 'max_tokens' : finishReason === 'tool_calls' ? 'tool_use' : 'end_turn',
              usage: {
                // Anthropic's input_tokens are the uncached ones.
                input: Math.max(0, prompt - cached - written),
                output: completionTokens,
                cacheRead: cached,
                cacheWrite: written,
              },
            })
          : responsesStream({
              ...(reasoning
                ? { reasoning: { id: `rs_${scriptedRequest.sequence}`, summary: reasoning, encrypted: signature } }
                : {}),
              ...(content ? { text: content } : {}),
              functionCalls: toolCalls.map((call) => ({ callId: call.id, name: call.name, arguments: call.arguments })),
              status: finishReason === 'length' ? 'incomplete' : 'completed',
              usage: { input: promptTokens, output: completionTokens, cached },
            });
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...reply.headers });
      response.end(stream);
      this.finish(currentRecord, response);
      return;
    }

    if (reply.endlessLineBytes !== undefined) {
      await this.sendEndlessLine(response, reply.endlessLineBytes, disconnect.signal);
      if (!disconnect.signal.aborted && !response.destroyed) this.finish(currentRecord, response);
      return;
    }

    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      ...identity,
      object: 'chat.completion.chunk',
      choices,
      ...(includeUsage && !llamaServer ? { usage: null } : {}),
      ...extra,
    });
    /** One choice of a chunk, in the dialect's shape. */
    const choice = (delta: Record<string, unknown>, finishReasonOfChunk: string | null = null) =>
      llamaServer
        ? { index: 0, delta, finish_reason: finishReasonOfChunk }
        : { index: 0, delta, logprobs: null, finish_reason: finishReasonOfChunk };
    const events: unknown[] = [
      chunk([
        choice(llamaServer ? { role: 'assistant', content: null } : { role: 'assistant', content: '', refusal: null }),
      ]),
    ];
    if (reasoning.length > 0) {
      for (const piece of splitIntoPieces(reasoning, Math.ceil(reasoning.length / 20)))
        events.push(chunk([choice({ [reasoningField]: piece })]));
    }
    if (content.length > 0) {
      for (const piece of splitIntoPieces(content, reply.chunks ?? Math.ceil(content.length / 20))) {
        events.push(chunk([choice({ content: piece })]));
      }
    }
    toolCalls.forEach((call, index) => {
      events.push(
        chunk([
          choice({
            tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
          }),
        ]),
      );
      for (const piece of splitIntoPieces(call.arguments, call.arguments.length > 1 ? 2 : 1)) {
        if (piece === '') continue;
        events.push(chunk([choice({ tool_calls: [{ index, function: { arguments: piece } }] })]));
      }
    });
    events.push(chunk([choice({}, finishReason)]));
    if (includeUsage) events.push(chunk([], { usage }));

    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...reply.headers,
    });
    response.flushHeaders();

    // "Processing the prompt": only SSE comment pings until the first chunk.
    const firstChunkAt = Date.now() + (reply.promptProcessingMs ?? 0);
    while (Date.now() < firstChunkAt && !disconnect.signal.aborted && !response.destroyed) {
      await sleep(Math.min(reply.pingIntervalMs ?? 1_000, firstChunkAt - Date.now()), disconnect.signal);
      if (Date.now() < firstChunkAt && !disconnect.signal.aborted && !response.destroyed) response.write(':\n\n');
    }

    for (let index = 0; index < events.length; index += 1) {
      if (reply.stallAfterChunks !== undefined && index >= reply.stallAfterChunks) {
        await untilAborted(disconnect.signal);
        return;
      }
      if (index > 0) await sleep(reply.delayBetweenChunksMs ?? 0, disconnect.signal);
      if (disconnect.signal.aborted || response.destroyed) return;
      const event = `data: ${JSON.stringify(events[index])}\n\n`;
      const line = reply.stampSendTime ? event.replaceAll(SEND_TIME_PLACEHOLDER, String(Date.now())) : event;
      if (reply.invalidUtf8 && line.includes(INVALID_UTF8_MARKER)) {
        const pieces = line.split(INVALID_UTF8_MARKER).map((piece) => Buffer.from(piece, 'utf8'));
        response.write(
          Buffer.concat(pieces.flatMap((piece, position) => (position ? [Buffer.from([0xc3, 0x28]), piece] : [piece]))),
        );
      } else {
        response.write(line);
      }
    }
    if (reply.stallAfterChunks !== undefined) {
      // Asked to stall after more events than there are: stall before `data: [DONE]`.
      await untilAborted(disconnect.signal);
      return;
    }
    if (disconnect.signal.aborted || response.destroyed) return;
    response.end('data: [DONE]\n\n');
    this.finish(currentRecord, response);
  }

  /**
   * Answers a request to an endpoint that says the context window, as the configured server
   * family does (the others answer 404 as those servers do); false for any other request.
   */
  private answerWindowProbe(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    const method = request.method ?? '';
    const probe = `${method} ${path}`;
    const window = this.contextWindow;
    const endpoint = window === undefined ? 'none' : this.windowEndpoint;
    let answer: unknown;
    if (probe === 'GET /props') {
      if (endpoint === 'llama-server')
        answer = {
          default_generation_settings: { n_ctx: window, params: { n_predict: -1 } },
          total_slots: 1,
          model_path: `/models/${SCRIPTED_MODEL_NAME}.gguf`,
        };
    } else if (probe === 'GET /v1/models') {
      if (endpoint !== 'vllm') return false;
      answer = {
        object: 'list',
        data: [{ id: SCRIPTED_MODEL_NAME, object: 'model', created: 0, owned_by: 'vllm', max_model_len: window }],
      };
    } else if (probe === 'GET /api/ps') {
      if (endpoint === 'ollama')
        answer = {
          models: [
            { name: `${SCRIPTED_MODEL_NAME}:latest`, model: `${SCRIPTED_MODEL_NAME}:latest`, context_length: window },
          ],
        };
    } else if (probe === 'POST /api/show') {
      if (endpoint === 'ollama')
        answer = {
          parameters: `num_ctx                        ${window}\nstop                           "<|im_end|>"`,
          model_info: { 'general.architecture': 'llama', 'llama.context_length': 32_768 },
        };
    } else {
      return false;
    }
    request.resume();
    this.windowProbes.push({ method, path, status: answer === undefined ? 404 : 200 });
    if (answer === undefined) this.sendError(response, 404, `No route for ${method} ${request.url ?? ''}`, 'not_found');
    else this.sendJson(response, 200, answer);
    return true;
  }

  /** An SSE response of one line that never ends: `bytes` bytes of `a`, as fast as the client reads them. */
  private async sendEndlessLine(response: ServerResponse, bytes: number, disconnected: AbortSignal): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    response.write('data: {"x":"');
    const piece = Buffer.alloc(64 * 1024, 'a');
    for (let sent = 0; sent < bytes && !disconnected.aborted && !response.destroyed; sent += piece.length) {
      if (!response.write(piece)) await drainedOrClosed(response);
    }
    if (!disconnected.aborted && !response.destroyed) response.end();
  }

  /** Marks `record` completed once `response` has been fully flushed. */
  private finish(record: ScriptedRequestRecord, response: ServerResponse): void {
    const markCompleted = () => {
      if (record.aborted) return;
      record.completed = true;
      this.notifyWaiters(record);
    };
    if (response.writableFinished) markCompleted();
    else response.once('finish', markCompleted);
  }

  private sendJson(
    response: ServerResponse,
    status: number,
    payload: unknown,
    headers: Record<string, string> = {},
  ): void {
    if (response.destroyed || response.headersSent) return;
    const text = JSON.stringify(payload);
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    response.end(text);
  }

  private sendError(
    response: ServerResponse,
    status: number,
    message: string,
    code?: string,
    headers: Record<string, string> = {},
  ): void {
    this.sendJson(
      response,
      status,
      { error: { message, type: errorTypeForStatus(status), param: null, code: code ?? null } },
      headers,
    );
  }
}

/** Reads the whole request body as UTF-8 text. */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
    request.on('close', () => {
      if (!request.complete) reject(new Error('The client disconnected while sending the request body.'));
    });
  });
}
