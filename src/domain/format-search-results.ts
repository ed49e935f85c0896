import type { SearchResult } from './search-backend';

/** A snippet on one line, cut to `maxCharacters`. */
function oneLine(text: string, maxCharacters: number): string {
  const compact = text.replace(/\s+/g, ' ').trim();
  return compact.length > maxCharacters ? `${compact.slice(0, maxCharacters - 1).trimEnd()}…` : compact;
}

/**
 * One query's results as a readable markdown list: a heading naming the query and where it was
 * searched, then per result its title, its URL or path, and its snippet.
 *
 * ```
 * ## Search: "BYD 2024 sales" (local knowledge base, 2 results)
 *
 * 1. **BYD 2024 sales** — /data/kb/byd.md
 *    BYD sold 4,272,145 new energy vehicles in 2024…
 * ```
 */
export function formatSearchResults(
  query: string,
  backendName: string,
  results: readonly SearchResult[],
  maxSnippetCharacters = 400,
): string {
  const heading = `## Search: ${JSON.stringify(query)} (${backendName}, ${results.length} result${results.length === 1 ? '' : 's'})`;
  if (results.length === 0) return `${heading}\n\nNo results. Try other or fewer words.`;
  const items = results.map((result, index) => {
    const title = oneLine(result.title, 200) || '(untitled)';
    const location = result.url ?? result.path;
    const line = location ? `${index + 1}. **${title}** — ${location}` : `${index + 1}. **${title}**`;
    const snippet = oneLine(result.snippet, maxSnippetCharacters);
    return snippet ? `${line}\n   ${snippet}` : line;
  });
  return `${heading}\n\n${items.join('\n')}`;
}
