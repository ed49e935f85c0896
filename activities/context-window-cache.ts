import type { ContextWindow } from '../src/core/context-window';
import { CONTEXT_WINDOW_CACHE_MS, contextWindowProbeDue } from '../src/core/context-window';
import type { ChatModel } from './model/chat-model';

/** Models whose windows one worker remembers; the oldest is forgotten past this (a run names its model, so names are the client's). */
export const CONTEXT_WINDOW_CACHE_MODELS = 64;

export interface ContextWindowCacheOptions {
  /** How long an answer is kept, in milliseconds; default `CONTEXT_WINDOW_CACHE_MS` (5 minutes). */
  maxAgeMs?: number;
  /** Models remembered at once; default {@link CONTEXT_WINDOW_CACHE_MODELS} (64). */
  maxModels?: number;
  /** The clock; default `Date.now`. */
  now?: () => number;
}

/**
 * The model server's context window asked once per worker and model (issue 34), not once per
 * run: what the server said (a window, or that it does not say) is kept for `maxAgeMs`, and runs
 * that ask meanwhile — a burst of them included, while the first answer is still on its way — get
 * the same answer. A failed ask is forgotten at once, so the next run asks again; a server that
 * could not be reached answers "does not say" (`ChatModel.contextWindow` never throws for it), which
 * is kept like any answer: runs meanwhile keep `limits.maxContextTokens` alone, and still learn the
 * window from a context-length refusal.
 */
export function cachedContextWindows(
  chatModel: Pick<ChatModel, 'contextWindow'>,
  options: ContextWindowCacheOptions = {},
): Pick<ChatModel, 'contextWindow'> {
  const maxAgeMs = options.maxAgeMs ?? CONTEXT_WINDOW_CACHE_MS;
  const maxModels = options.maxModels ?? CONTEXT_WINDOW_CACHE_MODELS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { window: Promise<ContextWindow | undefined>; askedAtMs: number }>();
  return {
    contextWindow(model: string): Promise<ContextWindow | undefined> {
      const entry = entries.get(model);
      if (entry && !contextWindowProbeDue(entry.askedAtMs, now(), maxAgeMs)) return entry.window;
      const window = chatModel.contextWindow(model);
      entries.delete(model);
      entries.set(model, { window, askedAtMs: now() });
      // The oldest asked first: a Map keeps its insertion order.
      while (entries.size > maxModels) entries.delete(entries.keys().next().value as string);
      window.catch(() => {
        if (entries.get(model)?.window === window) entries.delete(model);
      });
      return window;
    },
  };
}
