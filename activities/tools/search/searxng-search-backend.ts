import { fetchSearchJson } from './fetch-search-json';
import type { SearchBackend, SearchResult } from '../../../src/domain/search-backend';

/** Options of {@link createSearxngSearchBackend}. */
export interface SearxngSearchBackendOptions {
  /** The SearXNG instance, e.g. `http://localhost:8888` (`SEARXNG_URL`). Required. */
  baseUrl: string;
  /** Search language, e.g. `en`. Default: the instance's default. */
  language?: string;
  /** A request is abandoned (and retried) after this long. Default 20,000 ms. */
  timeoutMs?: number;
}

interface SearxngResponse {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown; score?: unknown }>;
  unresponsive_engines?: unknown[];
}

/** The `/search` address of an instance given as its root (or already as `/search`). */
function searchAddress(baseUrl: string): URL {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return new URL(trimmed.endsWith('/search') ? trimmed : `${trimmed}/search`);
}

/**
 * Searches a SearXNG instance through its JSON API (`GET /search?q=…&format=json`). The
 * instance must allow the json format (`search.formats` in its settings.yml), otherwise it
 * answers 403.
 */
export function createSearxngSearchBackend(options: SearxngSearchBackendOptions): SearchBackend {
  const timeoutMs = options.timeoutMs ?? 20_000;
  return {
    name: 'SearXNG',
    async search(query, limit, signal) {
      const url = searchAddress(options.baseUrl);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      if (options.language) url.searchParams.set('language', options.language);
      const body = (await fetchSearchJson({
        backendName: 'SearXNG',
        url: url.toString(),
        init: { method: 'GET', headers: { accept: 'application/json' } },
        signal,
        timeoutMs,
        rejectedAdvice:
          'Check SEARXNG_URL, and that the instance allows the JSON API: add "json" to search.formats in its settings.yml.',
        notFoundAdvice: `Check SEARXNG_URL (now ${options.baseUrl}): it should be the instance's root address.`,
      })) as SearxngResponse;
      if (!Array.isArray(body.results)) throw new Error('SearXNG answered without a "results" list.');
      const results: SearchResult[] = body.results
        .filter((result) => typeof result.url === 'string')
        .slice(0, limit)
        .map((result) => ({
          title: typeof result.title === 'string' && result.title.trim() ? result.title.trim() : String(result.url),
          url: String(result.url),
          snippet: typeof result.content === 'string' ? result.content.replace(/\s+/g, ' ').trim() : '',
          ...(typeof result.score === 'number' ? { score: result.score } : {}),
        }));
      const unresponsive = Array.isArray(body.unresponsive_engines) ? body.unresponsive_engines : [];
      if (results.length === 0 && unresponsive.length > 0) {
        throw new Error(
          `SearXNG found nothing because its engines did not answer (${JSON.stringify(unresponsive).slice(0, 200)}); retrying.`,
        );
      }
      return results;
    },
  };
}
