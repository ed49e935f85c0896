import type { KnowledgeBase } from '../../../src/knowledge-base/knowledge-base';
import type { SearchBackend } from '../../../src/domain/search-backend';

/** Searches the local knowledge base (SQLite FTS5). The worker opens the knowledge base once and passes it here. */
export function createLocalSearchBackend(knowledgeBase: KnowledgeBase): SearchBackend {
  return {
    name: 'local knowledge base',
    async search(query, limit, signal) {
      signal.throwIfAborted();
      return knowledgeBase
        .search(query, limit)
        .map((hit) => ({ title: hit.title, path: hit.path, snippet: hit.snippet, score: hit.score }));
    },
  };
}
