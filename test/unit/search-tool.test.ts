import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { formatSearchResults } from '../../src/domain/format-search-results';
import { KnowledgeBase } from '../../src/knowledge-base/knowledge-base';
import { createLocalSearchBackend } from '../../activities/tools/search/local-search-backend';
import type { SearchBackend, SearchResult } from '../../src/domain/search-backend';
import { createSearchTool } from '../../activities/tools/search/search-tool';
import { ToolInputError } from '../../activities/tools/tool-definition';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { validateArguments } from '../../activities/tools/validate-arguments';
import { toolContext } from '../fakes/documents';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-search-tool-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A backend that answers from a table and records its calls. */
function fakeBackend(
  answers: Record<string, SearchResult[]>,
): SearchBackend & { calls: Array<{ query: string; limit: number; signal: AbortSignal }> } {
  const calls: Array<{ query: string; limit: number; signal: AbortSignal }> = [];
  return {
    name: 'fake web',
    calls,
    async search(query, limit, signal) {
      calls.push({ query, limit, signal });
      return answers[query] ?? [];
    },
  };
}

const BYD: SearchResult = {
  title: 'BYD 2024 sales',
  url: 'https://example.com/byd',
  snippet: 'BYD sold 4,272,145 vehicles\n in 2024.',
};
const TESLA: SearchResult = {
  title: 'Tesla Q4 2024 deliveries',
  url: 'https://example.com/tesla',
  snippet: 'Tesla delivered 1,789,226 vehicles in 2024.',
};

describe('search tool', () => {
  test('is a valid tool; the schema takes a list of queries or one query', () => {
    const tool = createSearchTool(fakeBackend({}));
    assert.deepEqual(new ToolRegistry([tool]).names(), ['search']);
    assert.deepEqual(validateArguments(tool.parameters, { query: ['a', 'b'] }), []);
    assert.deepEqual(validateArguments(tool.parameters, { query: 'a' }), []);
    assert.deepEqual(validateArguments(tool.parameters, { query: 3 }), [
      'argument "query" must be array or string, got integer',
    ]);
    assert.match(tool.description, /fake web/);
  });

  test('several queries in one call: a markdown list per query, in the order asked', async () => {
    const backend = fakeBackend({
      'BYD 2024 sales': [BYD],
      'Tesla 2024 deliveries': [TESLA, { title: 'Untitled\nresult', url: 'https://example.com/x', snippet: '' }],
    });
    const context = toolContext();
    const output = await createSearchTool(backend, { resultsPerQuery: 3 }).run(
      { query: ['BYD 2024 sales', 'Tesla 2024 deliveries', 'nothing here'] },
      context,
    );
    assert.equal(
      output,
      [
        '## Search: "BYD 2024 sales" (fake web, 1 result)',
        '',
        '1. **BYD 2024 sales** — https://example.com/byd',
        '   BYD sold 4,272,145 vehicles in 2024.',
        '',
        '## Search: "Tesla 2024 deliveries" (fake web, 2 results)',
        '',
        '1. **Tesla Q4 2024 deliveries** — https://example.com/tesla',
        '   Tesla delivered 1,789,226 vehicles in 2024.',
        '2. **Untitled result** — https://example.com/x',
        '',
        '## Search: "nothing here" (fake web, 0 results)',
        '',
        'No results. Try other or fewer words.',
      ].join('\n'),
    );
    assert.deepEqual(
      backend.calls.map((call) => [call.query, call.limit]),
      [
        ['BYD 2024 sales', 3],
        ['Tesla 2024 deliveries', 3],
        ['nothing here', 3],
      ],
    );
    assert.ok(
      backend.calls.every((call) => call.signal === context.signal),
      'the context signal reaches the backend',
    );
    assert.equal(context.heartbeats.length, 3);
  });

  test('one query as a string; blanks and repeats dropped; too many or none refused', async () => {
    const backend = fakeBackend({ BYD: [BYD] });
    const tool = createSearchTool(backend, { maxQueriesPerCall: 2 });
    assert.match(await tool.run({ query: '  BYD ' }, toolContext()), /^## Search: "BYD" \(fake web, 1 result\)/);
    await tool.run({ query: ['BYD', 'BYD', ' '] }, toolContext());
    assert.deepEqual(
      backend.calls.map((call) => call.query),
      ['BYD', 'BYD'],
    );
    await assert.rejects(
      tool.run({ query: ['a', 'b', 'c'] }, toolContext()),
      (error) => error instanceof ToolInputError && /at most 2/.test(error.message),
    );
    await assert.rejects(
      tool.run({ query: [] }, toolContext()),
      (error) => error instanceof ToolInputError && /"query" is empty/.test(error.message),
    );
    await assert.rejects(
      tool.run({ query: [1, 2] }, toolContext()),
      (error) => error instanceof ToolInputError && /must be a search query or a list/.test(error.message),
    );
  });

  test('backend errors propagate so Temporal retries them', async () => {
    const failing: SearchBackend = {
      name: 'down',
      search: async () => Promise.reject(new Error('503 Service Unavailable')),
    };
    await assert.rejects(createSearchTool(failing).run({ query: ['x'] }, toolContext()), /503/);
  });

  test('with the local knowledge base: file paths and bold snippets; results capped per query', async () => {
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'kb.sqlite'));
    try {
      await knowledgeBase.add([resolve(__dirname, '../../samples/knowledge-base')]);
      const tool = createSearchTool(createLocalSearchBackend(knowledgeBase), { resultsPerQuery: 2 });
      const output = await tool.run({ query: ['Tesla deliveries 2024', 'LFP battery chemistry'] }, toolContext());
      const sections = output.split(/\n\n(?=## Search)/);
      assert.equal(sections.length, 2);
      assert.match(
        sections[0] as string,
        /^## Search: "Tesla deliveries 2024" \(local knowledge base, 2 results\)\n\n1\. \*\*Tesla deliveries in 2024\*\* — \/.*samples\/knowledge-base\/tesla-2024-deliveries\.md\n {3}.*\*\*Tesla\*\*/,
      );
      assert.match(
        sections[1] as string,
        /1\. \*\*Battery chemistry in electric cars\*\* — .*ev-battery-chemistry\.md/,
      );
      const aborted = new AbortController();
      aborted.abort();
      await assert.rejects(tool.run({ query: 'BYD' }, toolContext(aborted.signal)), { name: 'AbortError' });
    } finally {
      knowledgeBase.close();
    }
  });

  test('formatSearchResults cuts long snippets and titles to one line', () => {
    const text = formatSearchResults('q', 'web', [{ title: 'T', path: '/kb/a.md', snippet: 'word '.repeat(200) }], 50);
    const snippetLine = text.split('\n').at(-1) as string;
    assert.ok(snippetLine.length <= 53 && snippetLine.endsWith('…'));
    assert.match(text, /1\. \*\*T\*\* — \/kb\/a\.md/);
  });
});
