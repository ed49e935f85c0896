import {
  windowOfLlamaServerProps,
  windowOfOllamaPs,
  windowOfOllamaShow,
  windowOfVllmModels,
  type ContextWindow,
} from '../../src/core/context-window';

/**
 * Learns an OpenAI-compatible server's context window by asking where each server family says
 * it: vLLM's `GET /v1/models` (`max_model_len`), llama-server's `GET /props`
 * (`default_generation_settings.n_ctx`), Ollama's `GET /api/ps` (the loaded model's
 * `context_length`) and `POST /api/show` (`num_ctx`, else Ollama's default context). All are asked
 * at once, each with a short timeout; a server that answers none of them (OpenAI, a gateway)
 * leaves the window unknown. Never throws for what a server answers: the parsers are in
 * src/core/context-window.ts.
 */

/** Where to ask, and how. */
export interface WindowProbeOptions {
  /** The API's base URL (usually ending in `/v1`). */
  baseUrl: string;
  /** Sent as a bearer token, as the model calls send it. */
  apiKey: string;
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
function probes(
  baseUrl: string,
  model: string,
): Array<{ url: string; body?: unknown; read: (body: unknown) => ContextWindow | undefined }> {
  const origin = serverOrigin(baseUrl);
  return [
    { url: `${baseUrl.replace(/\/+$/, '')}/models`, read: (body) => windowOfVllmModels(body, model) },
    { url: `${origin}/props`, read: windowOfLlamaServerProps },
    { url: `${origin}/api/ps`, read: (body) => windowOfOllamaPs(body, model) },
    { url: `${origin}/api/show`, body: { model }, read: windowOfOllamaShow },
  ];
}

/** The model's context window as the server says it, or undefined when it does not say. */
export async function probeContextWindow(
  options: WindowProbeOptions,
  model: string,
): Promise<ContextWindow | undefined> {
  const fetchJson = async (url: string, body: unknown): Promise<unknown> => {
    const response = await (options.fetch ?? fetch)(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${options.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    return response.json();
  };

  const answers = await Promise.all(
    probes(options.baseUrl, model).map(async (probe) => {
      try {
        return probe.read(await fetchJson(probe.url, probe.body));
      } catch {
        return undefined;
      }
    }),
  );
  return answers.find((answer) => answer !== undefined);
}
