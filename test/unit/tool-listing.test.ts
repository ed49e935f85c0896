import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  describeSource,
  formatToolListing,
  parseToolListing,
  shortDescription,
  type ToolListing,
} from '../../src/cli/tool-listing';

/** `react-agent tools`: the listing worker/list-tools.ts prints, as the command shows it. */
const listing: ToolListing = {
  tools: [
    {
      name: 'search',
      source: 'built-in',
      requiresApproval: false,
      description: 'Search the web and return the top results for each query. Use several queries at once.',
    },
    { name: 'lookup', source: 'module', requiresApproval: false, description: 'Looks a term up.\nSecond line.' },
    {
      name: 'echo',
      source: 'mcp',
      server: 'everything',
      requiresApproval: false,
      description: 'Echoes back the input string',
    },
    {
      name: 'web_get-sum',
      source: 'mcp',
      server: 'web',
      serverToolName: 'get-sum',
      requiresApproval: true,
      description: 'Returns the sum of two numbers',
    },
  ],
  skippedServers: [
    {
      server: 'graph',
      reason: 'MCP server "graph" (stdio: graph-server) did not start: exited with code 3\nits stderr ended with: …',
    },
  ],
};

describe('shortDescription', () => {
  test('the first sentence of the first line', () => {
    assert.equal(shortDescription('Search the web. Then more.'), 'Search the web.');
    assert.equal(shortDescription('Looks a term up\nSecond line.'), 'Looks a term up');
    assert.equal(shortDescription('  Version 1.2 is out. Really.  '), 'Version 1.2 is out.');
    assert.equal(shortDescription(''), '');
  });

  test('cut with an ellipsis past the limit', () => {
    const cut = shortDescription('x'.repeat(100), 20);
    assert.equal(cut, `${'x'.repeat(19)}…`);
    assert.equal(cut.length, 20);
    assert.equal(shortDescription('y'.repeat(20), 20), 'y'.repeat(20));
  });
});

test("each tool's source: built-in, module, its MCP server (with its own name when renamed)", () => {
  assert.deepEqual(listing.tools.map(describeSource), ['built-in', 'module', 'mcp everything', 'mcp web, its get-sum']);
});

test('the table: a header, one aligned row per tool with approval and short description, the servers left out, the totals', () => {
  const lines = formatToolListing(listing).split('\n');
  assert.deepEqual(lines, [
    'TOOL         SOURCE                APPROVAL  DESCRIPTION',
    'search       built-in              -         Search the web and return the top results for each query.',
    'lookup       module                -         Looks a term up.',
    'echo         mcp everything        -         Echoes back the input string',
    'web_get-sum  mcp web, its get-sum  required  Returns the sum of two numbers',
    'MCP server "graph" left out (optional): MCP server "graph" (stdio: graph-server) did not start: exited with code 3',
    '4 tools: 2 built-in or from modules, 2 from 2 MCP servers; 1 needs approval.',
  ]);
});

test('no tools at all says so', () => {
  assert.match(formatToolListing({ tools: [], skippedServers: [] }), /no tools \(REACT_AGENT_TOOLS=none/);
  assert.equal(
    formatToolListing({ tools: [listing.tools[2] as ToolListing['tools'][number]], skippedServers: [] })
      .split('\n')
      .at(-1),
    '1 tool: 0 built-in or from modules, 1 from 1 MCP server.',
  );
});

test('the JSON the lister printed is read back; anything else is refused quoting it', () => {
  assert.deepEqual(parseToolListing(JSON.stringify(listing)), listing);
  assert.throws(
    () => parseToolListing('Error: Cannot find module'),
    /the tool listing was not readable: "Error: Cannot find module"/,
  );
  assert.throws(() => parseToolListing('{"tools": {}}'), /not readable/);
});
