/**
 * An in-process stand-in for the openai client's `chat.completions.create`, with builders for
 * the streamed chunks real servers send, for unit tests of the model activity (no HTTP). For
 * tests over HTTP, use `scripted-model-server.ts`.
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */
import OpenAI from 'openai';
import { OpenAIChatModel } from '../../activities/model/openai-chat-model';

/** One call the activity made: the request body and the request options. */
export interface RecordedChatCall {
  params: { model: string; messages: Array<Record<string, unknown>>; stream: boolean; [key: string]: unknown };
  options: { signal?: AbortSignal; headers?: Record<string, string> };
}

/** Decides what `create()` returns (a stream of chunks) or throws, for each call. */
export type ChatResponder = (call: RecordedChatCall) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;

/** An `openai` stand-in with only `chat.completions.create`; records what it was given. */
export function fakeOpenAI(responder: ChatResponder): { openai: OpenAI; calls: RecordedChatCall[] } {
  const calls: RecordedChatCall[] = [];
  const create = async (params: RecordedChatCall['params'], options: RecordedChatCall['options']) => {
    const call = { params, options };
    calls.push(call);
    return responder(call);
  };
  return { openai: { chat: { completions: { create } } } as unknown as OpenAI, calls };
}

/** A `chat.completion.chunk` with one choice carrying `delta` (and a finish reason, if given). */
export function deltaChunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The usage chunk servers send last when asked to (`choices: []`). */
export function usageChunk(promptTokens: number, completionTokens: number) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake',
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

/** Yields `chunks`, `delayMs` apart (and `firstDelayMs` before the first). */
export async function* streamOf(
  chunks: unknown[],
  options: { delayMs?: number; firstDelayMs?: number; signal?: AbortSignal } = {},
): AsyncGenerator<unknown> {
  for (const [index, chunk] of chunks.entries()) {
    const delay = index === 0 ? (options.firstDelayMs ?? options.delayMs ?? 0) : (options.delayMs ?? 0);
    if (delay) await abortableSleep(delay, options.signal);
    yield chunk;
  }
}

/** Yields `chunks`, then nothing more until `signal` aborts; then rejects like the openai client. */
export async function* stallingStream(chunks: unknown[], signal: AbortSignal | undefined): AsyncGenerator<unknown> {
  for (const chunk of chunks) yield chunk;
  await abortableSleep(Number.POSITIVE_INFINITY, signal);
}

/** Resolves after `milliseconds`; rejects with the client's abort error as soon as `signal` aborts. */
function abortableSleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new OpenAI.APIUserAbortError());
    };
    const timer = Number.isFinite(milliseconds)
      ? setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, milliseconds)
      : undefined;
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The project's OpenAI chat model over a fake (or real) `openai` client: the adapter under test, without HTTP. */
export function chatModelOver(openai: OpenAI, baseUrl = 'http://model.test/v1'): OpenAIChatModel {
  return new OpenAIChatModel({ client: openai, baseUrl });
}
