import { ToolInputError, type ToolDefinition } from '../tool-definition';
import { formatSearchResults } from '../../../src/domain/format-search-results';
import type { SearchBackend } from '../../../src/domain/search-backend';

/** Options of {@link createSearchTool}. */
export interface SearchToolOptions {
  /** Results returned per query. Default 5 (`REACT_AGENT_SEARCH_RESULTS`). */
  resultsPerQuery?: number;
  /** Queries accepted in one call. Default 10. */
  maxQueriesPerCall?: number;
}

export const DEFAULT_RESULTS_PER_QUERY = 5;
export const DEFAULT_MAXIMUM_QUERIES_PER_CALL = 10;

/** The `query` argument as a list: one string or an array of strings, blanks and repeats dropped. */
function requestedQueries(value: unknown, maxQueries: number): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== 'string')) {
    throw new ToolInputError(
      '"query" must be a search query or a list of queries (strings), like ["BYD 2024 sales", "Tesla 2024 deliveries"].',
    );
  }
  const queries = [...new Set((list as string[]).map((entry) => entry.replace(/\s+/g, ' ').trim()).filter(Boolean))];
  if (queries.length === 0) throw new ToolInputError('"query" is empty: pass at least one search query.');
  if (queries.length > maxQueries)
    throw new ToolInputError(`Too many queries in one call (${queries.length}); send at most ${maxQueries}.`);
  return queries;
}

/**
 * The `search` tool (as in DeepResearch): runs one or several queries at once against a
 * backend (local knowledge base, SearXNG or Serper) and returns, per query, a markdown list of
 * results with title, URL or path, and snippet. Backend failures propagate, so Temporal retries
 * the ones worth retrying.
 */
export function createSearchTool(backend: SearchBackend, options: SearchToolOptions = {}): ToolDefinition {
  const resultsPerQuery = options.resultsPerQuery ?? DEFAULT_RESULTS_PER_QUERY;
  const maxQueries = options.maxQueriesPerCall ?? DEFAULT_MAXIMUM_QUERIES_PER_CALL;
  return {
    name: 'search',
    description:
      `Search (${backend.name}) and return the top results for each query: title, URL or file path, and a snippet. ` +
      'Pass several queries at once to look at a question from different angles.',
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: ['array', 'string'],
          items: { type: 'string' },
          description:
            'Search queries, e.g. ["BYD 2024 vehicle sales", "Tesla 2024 deliveries"]. One query as a string is accepted too.',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    activity: { startToCloseSeconds: 120, heartbeatSeconds: 30 },
    async run(args, context) {
      const queries = requestedQueries(args.query, maxQueries);
      const sections = await Promise.all(
        queries.map(async (query) => {
          const results = await backend.search(query, resultsPerQuery, context.signal);
          context.heartbeat({ query, results: results.length });
          return formatSearchResults(query, backend.name, results.slice(0, resultsPerQuery));
        }),
      );
      return sections.join('\n\n');
    },
  };
}
