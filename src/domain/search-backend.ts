/** One search hit, from the web or from the local knowledge base. */
export interface SearchResult {
  title: string;
  /** The page's address (web backends). */
  url?: string;
  /** The file's path (local knowledge base). */
  path?: string;
  /** A short passage of the page or document that matches the query. */
  snippet: string;
  /** Relevance as the backend reports it, higher is better; absent when the backend gives none. */
  score?: number;
}

/**
 * Where the `search` tool looks things up. A backend returns the best `limit` results for one
 * query. It throws a plain `Error` for failures worth retrying (rate limits, server errors,
 * network), and a non-retryable `ApplicationFailure` when retrying cannot help (a rejected key).
 */
export interface SearchBackend {
  /** Shown to the model beside the results, e.g. "SearXNG" or "local knowledge base". */
  readonly name: string;
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchResult[]>;
}
