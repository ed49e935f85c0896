import type { LearnContextWindowInput, LearnContextWindowOutput } from '../src/core/activity-contracts';
import {
  promptBudgetOf,
  windowOfLlamaServerProps,
  windowOfOllamaPs,
  windowOfOllamaShow,
  windowOfVllmModels,
  type ContextWindow,
} from '../src/core/context-window';
import type { ModelDefaults } from './model-activity';

/**
 * Learns the model server's context window by asking the server where it says it, once per run
 * at its start (issue 16): vLLM's `GET /v1/models` (`max_model_len`), llama-server's `GET /props`
 * (`default_generation_settings.n_ctx`), Ollama's `GET /api/ps` (the loaded model's
 * `context_length`) and `POST /api/show` (`num_ctx`, else Ollama's default context). All are asked
 * at once, each with a short timeout; a server that answers none of them (OpenAI, a gateway)
 * leaves the window unknown, and the run keeps its `maxContextTokens` alone. Never throws for what
 * a server answers: the parsers are in src/core/context-window.ts.
 */

export interface ContextWindowDependencies {
  /** The endpoint and key the model calls use (`openai.baseURL`, `openai.apiKey`). */
  openai: { baseURL: string; apiKey: string };
  modelDefaults: Pick<ModelDefaults, 'maxOutputTokens'>;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** How long each endpoint may take to answer, in milliseconds. Default 5,000. */
  timeoutMs?: number;
}

/** The server's own root: the base URL without its `/v1` (llama-server's and Ollama's endpoints are there). */
export function serverOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Where each server says its window, in the order an answer is preferred. */
function probes(baseUrl: string, model: string): Array<{ url: string; body?: unknown; read: (body: unknown) => ContextWindow | undefined }> {
  const origin = serverOrigin(baseUrl);
  return [
    { url: `${baseUrl.replace(/\/+$/, '')}/models`, read: (body) => windowOfVllmModels(body, model) },
    { url: `${origin}/props`, read: windowOfLlamaServerProps },
    { url: `${origin}/api/ps`, read: (body) => windowOfOllamaPs(body, model) },
    { url: `${origin}/api/show`, body: { model }, read: windowOfOllamaShow },
  ];
}

export function createLearnContextWindow(dependencies: ContextWindowDependencies) {
  const { openai, modelDefaults } = dependencies;
  const fetchJson = async (url: string, body: unknown): Promise<unknown> => {
    const response = await (dependencies.fetch ?? fetch)(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { accept: 'application/json', authorization: `Bearer ${openai.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(dependencies.timeoutMs ?? 5_000),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    return response.json();
  };

  return async function learnContextWindow(input: LearnContextWindowInput): Promise<LearnContextWindowOutput> {
    const maxOutputTokens = input.maxOutputTokens ?? modelDefaults.maxOutputTokens;
    const answers = await Promise.all(
      probes(openai.baseURL, input.model).map(async (probe) => {
        try {
          return probe.read(await fetchJson(probe.url, probe.body));
        } catch {
          return undefined;
        }
      }),
    );
    const window = answers.find((answer) => answer !== undefined);
    if (!window) return { maxOutputTokens };
    return { contextWindow: window.tokens, source: window.source, maxOutputTokens, promptBudget: promptBudgetOf(window.tokens, maxOutputTokens) };
  };
}
