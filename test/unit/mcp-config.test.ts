import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadToolSelection } from '../../src/config/enabled-tools-config';
import { DEFAULT_MCP_TIMEOUT_SECONDS, loadMcpConfig, parseMcpConfig } from '../../src/config/mcp-config';

const FILE = '/etc/agent/mcp.json';
const SECRET = 'ghp_SECRET_token_0123456789';

function parse(document: unknown, environment: Record<string, string> = {}) {
  return parseMcpConfig(typeof document === 'string' ? document : JSON.stringify(document), {
    file: FILE,
    environment,
  });
}

function refused(document: unknown, variable: string, pattern: RegExp, environment: Record<string, string> = {}): void {
  assert.throws(
    () => parse(document, environment),
    (error: unknown) => {
      assert.ok(error instanceof ConfigurationError, `expected a ConfigurationError, got ${String(error)}`);
      assert.equal(error.variable, variable);
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes(SECRET), 'no secret in the message');
      return true;
    },
  );
}

describe('parseMcpConfig', () => {
  test("Claude Desktop's format: a stdio server and a Streamable HTTP server, with defaults", () => {
    const config = parse({
      globalShortcut: 'ignored',
      mcpServers: {
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { LOG: 'debug' } },
        remote: { url: 'https://mcp.example.com/mcp' },
      },
    });
    assert.equal(config.file, FILE);
    assert.deepEqual(config.servers, [
      {
        name: 'everything',
        toolPrefix: '',
        timeoutSeconds: DEFAULT_MCP_TIMEOUT_SECONDS,
        requiresApproval: false,
        optional: false,
        idempotentTools: false,
        secrets: [],
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-everything'],
        env: { LOG: 'debug' },
      },
      {
        name: 'remote',
        toolPrefix: '',
        timeoutSeconds: DEFAULT_MCP_TIMEOUT_SECONDS,
        requiresApproval: false,
        optional: false,
        idempotentTools: false,
        secrets: [],
        transport: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: {},
      },
    ]);
  });

  test('the per-server options, a cwd relative to the file, and disabled servers left out', () => {
    const config = parse({
      mcpServers: {
        fs: {
          type: 'stdio',
          command: 'node',
          args: ['server.js'],
          cwd: 'servers/fs',
          tools: ['read_text_file', 'list_directory'],
          toolPrefix: 'fs_',
          timeoutSeconds: 30,
          requiresApproval: ['write_file'],
          maxConcurrentCalls: 2,
          optional: true,
          idempotentTools: true,
        },
        off: { command: 'nothing', disabled: true },
        vscode: { type: 'http', url: 'http://localhost:3001/mcp', requiresApproval: true },
      },
    });
    assert.equal(config.servers.length, 2);
    const fs = config.servers[0];
    assert.ok(fs?.transport === 'stdio');
    assert.equal(fs.cwd, '/etc/agent/servers/fs');
    assert.deepEqual(fs.tools, ['read_text_file', 'list_directory']);
    assert.equal(fs.toolPrefix, 'fs_');
    assert.equal(fs.timeoutSeconds, 30);
    assert.deepEqual(fs.requiresApproval, ['write_file']);
    assert.equal(fs.maxConcurrentCalls, 2);
    assert.equal(fs.optional, true);
    assert.equal(fs.idempotentTools, true);
    assert.equal(config.servers[1]?.transport, 'http');
    assert.equal(config.servers[1]?.requiresApproval, true);
  });

  test('${VAR} in env and headers comes from the environment; the resolved values are kept as secrets', () => {
    const config = parse(
      {
        mcpServers: {
          github: { command: 'github-mcp', env: { GITHUB_TOKEN: '${GITHUB_TOKEN}', MODE: 'read-only' } },
          remote: {
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer ${REMOTE_KEY}', 'X-Team': '${TEAM}' },
          },
        },
      },
      { GITHUB_TOKEN: SECRET, REMOTE_KEY: 'remote-key-987654', TEAM: 'research' },
    );
    const [github, remote] = config.servers;
    assert.ok(github?.transport === 'stdio' && remote?.transport === 'http');
    assert.deepEqual(github.env, { GITHUB_TOKEN: SECRET, MODE: 'read-only' });
    assert.deepEqual(github.secrets, [SECRET]);
    assert.deepEqual(remote.headers, { Authorization: 'Bearer remote-key-987654', 'X-Team': 'research' });
    assert.deepEqual(remote.secrets, ['remote-key-987654', 'research']);
    // Only env and headers are resolved: args stay as written.
    const literal = parse({ mcpServers: { s: { command: 'x', args: ['${HOME}'] } } }, { HOME: '/root' });
    assert.deepEqual(literal.servers[0]?.transport === 'stdio' && literal.servers[0].args, ['${HOME}']);
  });

  test('an unresolved ${VAR} names the variable, the server and the field, never a value', () => {
    refused(
      { mcpServers: { github: { command: 'github-mcp', env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } } } },
      'GITHUB_TOKEN',
      /server "github", env\.GITHUB_TOKEN uses \$\{GITHUB_TOKEN\}, but GITHUB_TOKEN is not set/,
    );
    refused(
      { mcpServers: { remote: { url: 'http://h/mcp', headers: { Authorization: 'Bearer ${KEY}' } } } },
      'KEY',
      /server "remote", headers\.Authorization uses \$\{KEY\}/,
      { KEY: '' },
    );
    refused(
      { mcpServers: { remote: { url: 'http://h/mcp', headers: { A: '${not a name}' } } } },
      'REACT_AGENT_MCP_CONFIG',
      /not a variable name/,
    );
  });

  test('unknown transport, missing command, both command and url, bad URL', () => {
    refused(
      { mcpServers: { old: { type: 'sse', url: 'http://localhost:3001/sse' } } },
      'REACT_AGENT_MCP_CONFIG',
      /\/etc\/agent\/mcp\.json\): server "old", field "type": unknown transport "sse".*stdio.*Streamable HTTP/,
    );
    refused(
      { mcpServers: { ws: { transport: 'websocket', url: 'ws://x' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "ws", field "transport": unknown transport "websocket"/,
    );
    refused({ mcpServers: { empty: { args: ['x'] } } }, 'REACT_AGENT_MCP_CONFIG', /server "empty": missing "command"/);
    refused(
      { mcpServers: { typed: { type: 'stdio' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "typed", field "command" must be the program to start/,
    );
    refused(
      { mcpServers: { both: { command: 'x', url: 'http://h/mcp' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "both": give either "command".*not both/,
    );
    refused(
      { mcpServers: { web: { url: 'ftp://h/mcp' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "web", field "url" must be an http\(s\) URL/,
    );
    refused(
      { mcpServers: { web: { type: 'http', command: 'x' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "web": "command" does not apply to a Streamable HTTP server/,
    );
  });

  test('bad types name the server and the field', () => {
    refused(
      { mcpServers: { s: { command: 'x', args: 'one two' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "args" must be an array of strings, got string/,
    );
    refused(
      { mcpServers: { s: { command: 'x', env: { TOKEN: 42 } } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "env": "TOKEN" must be a string, got number/,
    );
    refused(
      { mcpServers: { s: { command: 'x', timeoutSeconds: '30' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "timeoutSeconds" must be a positive number/,
    );
    refused(
      { mcpServers: { s: { command: 'x', maxConcurrentCalls: 1.5 } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "maxConcurrentCalls" must be a positive integer/,
    );
    refused(
      { mcpServers: { s: { command: 'x', optional: 'yes' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "optional" must be true or false/,
    );
    refused(
      { mcpServers: { s: { command: 'x', requiresApproval: 'all' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "requiresApproval" must be true, false or an array/,
    );
    refused(
      { mcpServers: { s: { command: 'x', toolPrefix: 'has space' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "toolPrefix" must be letters/,
    );
    refused(
      { mcpServers: { s: { command: 'x', tools: [] } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s", field "tools" is empty/,
    );
    refused(
      { mcpServers: { s: { command: 'x', toolprefix: 'a_' } } },
      'REACT_AGENT_MCP_CONFIG',
      /server "s": unknown field "toolprefix"\. Known fields: .*toolPrefix/,
    );
    refused({ mcpServers: { s: 'npx server' } }, 'REACT_AGENT_MCP_CONFIG', /server "s": expected an object/);
    refused({ mcpServers: [] }, 'REACT_AGENT_MCP_CONFIG', /expected "mcpServers", an object of servers by name/);
    refused({ servers: {} }, 'REACT_AGENT_MCP_CONFIG', /expected "mcpServers".*got none/);
    refused('{"mcpServers": ', 'REACT_AGENT_MCP_CONFIG', /\/etc\/agent\/mcp\.json\): not valid JSON/);
  });
});

describe('loadMcpConfig', () => {
  test('unset: no MCP servers; a missing file names the variable; a file is read and parsed', () => {
    assert.equal(loadMcpConfig({}), undefined);
    assert.throws(
      () => loadMcpConfig({ REACT_AGENT_MCP_CONFIG: '/nonexistent/mcp.json' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigurationError);
        assert.equal(error.variable, 'REACT_AGENT_MCP_CONFIG');
        assert.match(error.message, /cannot read \/nonexistent\/mcp\.json: ENOENT/);
        return true;
      },
    );
    const directory = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    try {
      const file = join(directory, 'mcp.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { memory: { command: 'node', args: ['memory.js'] } } }));
      const config = loadMcpConfig({ REACT_AGENT_MCP_CONFIG: file });
      assert.equal(config?.servers[0]?.name, 'memory');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('REACT_AGENT_TOOLS with MCP tools', () => {
  test('built-ins and other names are told apart; other names need an MCP configuration', () => {
    assert.deepEqual(loadToolSelection({}), { builtIns: ['search', 'visit', 'python', 'parse_file'] });
    assert.deepEqual(loadToolSelection({ REACT_AGENT_TOOLS: 'none', REACT_AGENT_MCP_CONFIG: 'mcp.json' }), {
      builtIns: [],
      mcp: [],
    });
    assert.deepEqual(
      loadToolSelection({ REACT_AGENT_TOOLS: 'search,echo,mcp:memory', REACT_AGENT_MCP_CONFIG: 'mcp.json' }),
      { builtIns: ['search'], mcp: ['echo', 'mcp:memory'] },
    );
    assert.throws(
      () => loadToolSelection({ REACT_AGENT_TOOLS: 'search,echo' }),
      /REACT_AGENT_TOOLS names unknown tools: echo.*MCP tools need REACT_AGENT_MCP_CONFIG/,
    );
  });
});

describe('examples/mcp.json', () => {
  test('is a valid configuration', () => {
    const config = loadMcpConfig({ REACT_AGENT_MCP_CONFIG: join(__dirname, '../../examples/mcp.json') });
    assert.deepEqual(
      config?.servers.map((server) => `${server.name} ${server.transport}`),
      ['files stdio', 'memory stdio'],
    );
  });
});
