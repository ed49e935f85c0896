import { fetchSearchJson } from './fetch-search-json';
import type { SearchBackend, SearchResult } from '../../../src/domain/search-backend';

/** Serper's API address. */
export const SERPER_DEFAULT_BASE_URL = 'https://google.serper.dev';

/** Options of {@link createSerperSearchBackend}. */
export interface SerperSearchBackendOptions {
  /** The Serper API key (`SERPER_API_KEY`), sent as `X-API-KEY`. Required; never put in messages. */
  apiKey: string;
  /** API address. Default `https://google.serper.dev` (tests point it at a local server). */
  baseUrl?: string;
  /** Country code, e.g. `us`. Default: Serper's default. */
  country?: string;
  /** Language code, e.g. `en`. Default: Serper's default. */
  language?: string;
  /** A request is abandoned (and retried) after this long. Default 20,000 ms. */
  timeoutMs?: number;
}

interface SerperResponse {
  organic?: Array<{ title?: unknown; link?: unknown; snippet?: unknown; position?: unknown }>;
}

/** Searches Google through Serper (`POST /search` with `X-API-KEY`; results in `organic`). */
export function createSerperSearchBackend(options: SerperSearchBackendOptions): SearchBackend {
  const baseUrl = (options.baseUrl ?? SERPER_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 20_000;
  return {
    name: 'Google (Serper)',
    async search(query, limit, signal) {
      const body = (await fetchSearchJson({
        backendName: 'Serper',
        url: `${baseUrl}/search`,
        init: {
          method: 'POST',
          headers: { 'X-API-KEY': options.apiKey, 'Content-Type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            q: query,
            num: limit,
            ...(options.country ? { gl: options.country } : {}),
            ...(options.language ? { hl: options.language } : {}),
          }),
        },
        signal,
        timeoutMs,
        rejectedAdvice: 'Check SERPER_API_KEY: Serper did not accept it (get a key at https://serper.dev).',
        notFoundAdvice: `Check the Serper address (now ${baseUrl}).`,
      })) as SerperResponse;
      const organic = Array.isArray(body.organic) ? body.organic : [];
      return organic
        .filter((result) => typeof result.link === 'string')
        .slice(0, limit)
        .map((result): SearchResult => ({
          title: typeof result.title === 'string' && result.title.trim() ? result.title.trim() : String(result.link),
          url: String(result.link),
          snippet: typeof result.snippet === 'string' ? result.snippet.replace(/\s+/g, ' ').trim() : '',
        }));
    },
  };
}
