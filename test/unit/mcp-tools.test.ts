import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { callResultText } from '../../activities/tools/mcp/mcp-call-result';
import {
  callFailure,
  McpCallError,
  McpFailureTypes,
  sendFailedBeforeServer,
} from '../../activities/tools/mcp/mcp-failures';
import { McpServerAnswerError, type McpServerConnection } from '../../activities/tools/mcp/mcp-server-connection';
import type { McpServerSettings } from '../../activities/tools/mcp/mcp-server-settings';
import { exposedToolName, mcpToolDefinitions } from '../../activities/tools/mcp/mcp-tool-definitions';
import { SecretRedactor } from '../../src/domain/secret-redaction';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolInputError, type ToolContext } from '../../activities/tools/tool-definition';
import { combineToolGroups, describeToolNames, ToolNameClashError } from '../../activities/tools/tool-groups';

const SETTINGS: McpServerSettings = {
  name: 'everything',
  transport: 'stdio',
  command: 'node',
  args: ['server.js'],
  env: { TOKEN: 'tok-secret-123456' },
  toolPrefix: '',
  timeoutSeconds: 10,
  requiresApproval: ['echo'],
  optional: false,
  idempotentTools: ['get-sum'],
  secrets: ['tok-secret-123456'],
};

const TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes back the input',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object' as const,
      properties: { message: { type: 'string' } },
      required: ['message'],
    },
  },
  { name: 'get-sum', inputSchema: { type: 'object' as const } },
  { name: 'tool.with/dots', title: 'Dots', inputSchema: { type: 'object' as const, properties: {} } },
];

/** A connection whose `callTool` does what the test says. */
function fakeConnection(
  settings: McpServerSettings,
  callTool: (tool: string, args: Record<string, unknown>, options: { onSending?: () => void }) => Promise<unknown>,
): McpServerConnection {
  return {
    settings,
    name: settings.name,
    callTool,
    redact: (text: string) => new SecretRedactor(settings.secrets).redact(text),
    redactValue: <T>(value: T) => new SecretRedactor(settings.secrets).redactValue(value),
  } as unknown as McpServerConnection;
}

function context(overrides: Partial<ToolContext> = {}): ToolContext & { states: unknown[] } {
  const states: unknown[] = [];
  return {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    recordAttemptState: (state) => states.push(state),
    workflowId: 'wf',
    callId: 'call-1',
    attempt: 1,
    states,
    ...overrides,
  };
}

describe('MCP call results as observations', () => {
  test('text in order; image and audio as notes; resources and links described; structured content when there is no text', () => {
    const { text, isError } = callResultText({
      content: [
        { type: 'text', text: 'Here it is:' },
        { type: 'image', data: 'A'.repeat(4000), mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
        { type: 'resource', resource: { uri: 'file:///photo.jpg', mimeType: 'image/jpeg', blob: 'AAAAAAAA' } },
        { type: 'resource_link', uri: 'demo://r/1', name: 'Resource 1', mimeType: 'text/plain', description: 'first' },
        { type: 'hologram' },
      ],
    });
    assert.equal(isError, false);
    assert.equal(
      text,
      [
        'Here it is:',
        '[image: image/png, 2.9 KB, not shown: this agent passes text only]',
        '[audio: audio/wav, 3 bytes, not shown: this agent passes text only]',
        '[resource file:///notes.md, text/markdown]\n# Notes',
        '[resource file:///photo.jpg, image/jpeg: 6 bytes of binary data, left out]',
        '[resource link: Resource 1 <demo://r/1> (text/plain; first)]',
        '[content of type "hologram" left out]',
      ].join('\n\n'),
    );
    assert.equal(
      callResultText({ content: [], structuredContent: { temperature: 22 } }).text,
      '{\n  "temperature": 22\n}',
    );
    assert.equal(
      callResultText({ content: [{ type: 'text', text: '{"t":22}' }], structuredContent: { t: 22 } }).text,
      '{"t":22}',
    );
    assert.equal(callResultText({}).text, '(the tool returned no content)');
    assert.deepEqual(callResultText({ content: [{ type: 'text', text: 'no such file' }], isError: true }), {
      text: 'no such file',
      isError: true,
    });
  });
});

describe('MCP failures: retried only when safe', () => {
  test('a request that never left is retried; one that may have reached the server only when the tool is idempotent', () => {
    const notSent = callFailure(new McpCallError('down.', 'not-sent', 'unavailable'), {
      server: 's',
      tool: 't',
      idempotent: false,
    });
    assert.ok(notSent instanceof ApplicationFailure);
    assert.equal(notSent.type, McpFailureTypes.unavailable);
    assert.equal(notSent.nonRetryable, false);
    const lost = callFailure(new McpCallError('closed.', 'sent', 'connection-lost'), {
      server: 's',
      tool: 't',
      idempotent: false,
    });
    assert.equal(lost.type, McpFailureTypes.connectionLost);
    assert.equal(lost.nonRetryable, true);
    assert.match(lost.message, /not retried.*idempotentTools/);
    const timeout = callFailure(new McpCallError('slow.', 'sent', 'timeout'), {
      server: 's',
      tool: 't',
      idempotent: true,
    });
    assert.equal(timeout.type, McpFailureTypes.timeout);
    assert.equal(timeout.nonRetryable, false);
  });

  test('which failed sends mean the server never got the request', () => {
    assert.equal(sendFailedBeforeServer(new Error('Not connected'), 'stdio'), true);
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    assert.equal(sendFailedBeforeServer(refused, 'http'), true);
    assert.equal(
      sendFailedBeforeServer(
        Object.assign(new Error('Streamable HTTP error: session not found'), { code: 404 }),
        'http',
      ),
      true,
    );
    assert.equal(
      sendFailedBeforeServer(Object.assign(new Error('Streamable HTTP error: boom'), { code: 500 }), 'http'),
      false,
    );
    const reset = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    assert.equal(sendFailedBeforeServer(reset, 'http'), false);
  });

  test('secrets are redacted; short values are left alone', () => {
    assert.equal(
      new SecretRedactor(['tok-secret-123456', 'ab']).redact('TOKEN=tok-secret-123456 and tok-secret-123456'),
      'TOKEN=[redacted] and [redacted]',
    );
    assert.equal(new SecretRedactor(['ab']).redact('about'), 'about');
  });
});

describe('MCP tools as ToolDefinitions', () => {
  test('names, prefixes, schemas, approval, allow-lists and activity settings', () => {
    const connection = fakeConnection({ ...SETTINGS, toolPrefix: 'ev_' }, async () => ({}));
    const definitions = mcpToolDefinitions(connection, TOOLS);
    assert.deepEqual(
      definitions.map((tool) => tool.name),
      ['ev_echo', 'ev_get-sum', 'ev_tool_with_dots'],
    );
    assert.deepEqual(
      definitions.map((tool) => tool.serverToolName),
      ['echo', 'get-sum', 'tool.with/dots'],
    );
    assert.deepEqual(definitions[0]?.parameters, {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    assert.deepEqual(definitions[1]?.parameters, { type: 'object', properties: {} });
    assert.equal(definitions[0]?.description, 'Echoes back the input');
    assert.equal(definitions[1]?.description, 'The tool "get-sum" of the MCP server "everything".');
    assert.equal(definitions[2]?.description, 'Dots');
    assert.deepEqual(
      definitions.map((tool) => tool.requiresApproval),
      [true, false, false],
    );
    assert.deepEqual(definitions[0]?.activity, {
      startToCloseSeconds: 40,
      heartbeatSeconds: 30,
      maxAttempts: 5,
      initialRetrySeconds: 2,
    });
    assert.equal(exposedToolName('x'.repeat(80), 'p_').length, 64);

    const allowed = mcpToolDefinitions(
      fakeConnection({ ...SETTINGS, tools: ['get-sum'] }, async () => ({})),
      TOOLS,
    );
    assert.deepEqual(
      allowed.map((tool) => tool.name),
      ['get-sum'],
    );
    assert.throws(
      () =>
        mcpToolDefinitions(
          fakeConnection({ ...SETTINGS, tools: ['get-sum', 'nope'] }, async () => ({})),
          TOOLS,
        ),
      /MCP server "everything": its "tools" list names "nope", which the server does not offer\. It offers: echo, get-sum, tool\.with\/dots/,
    );
  });

  test('a call: its result as text with secrets redacted, its request recorded as sent, isError and JSON-RPC errors as observations', async () => {
    let calls = 0;
    const connection = fakeConnection(SETTINGS, async (tool, args, options) => {
      calls += 1;
      options.onSending?.();
      if (args.fail === 'isError') return { content: [{ type: 'text', text: 'no such city' }], isError: true };
      if (args.fail === 'answer') throw new McpServerAnswerError('MCP error -32602: Invalid params');
      return { content: [{ type: 'text', text: `${tool}: ${String(args.message)} tok-secret-123456` }] };
    });
    const [echo] = mcpToolDefinitions(connection, TOOLS);
    const ok = context();
    assert.equal(await echo?.run({ message: 'hi' }, ok), 'echo: hi [redacted]');
    assert.deepEqual(ok.states, [{ mcpRequest: 'sending', callId: 'call-1' }]);
    await assert.rejects(echo?.run({ fail: 'isError' }, context()) as Promise<string>, (error: unknown) => {
      assert.ok(error instanceof ToolInputError);
      assert.equal(error.message, 'the tool "echo" (MCP server "everything") reported an error: no such city');
      return true;
    });
    await assert.rejects(
      echo?.run({ fail: 'answer' }, context()) as Promise<string>,
      (error: unknown) =>
        error instanceof ToolInputError && /refused the call of "echo": MCP error -32602/.test(error.message),
    );
    assert.equal(calls, 3);
  });

  test('a retry after an attempt that may have reached the server is not repeated unless the tool is idempotent; after a request that never left it is', async () => {
    let calls = 0;
    let failNext = false;
    const connection = fakeConnection(SETTINGS, async (_tool, _args, options) => {
      calls += 1;
      if (failNext) {
        failNext = false;
        throw new McpCallError('down.', 'not-sent', 'unavailable');
      }
      options.onSending?.();
      return { content: [{ type: 'text', text: 'done' }] };
    });
    const [echo, sum] = mcpToolDefinitions(connection, TOOLS);
    const interrupted = { mcpRequest: 'sending', callId: 'call-7' };
    await assert.rejects(
      echo?.run({}, context({ callId: 'call-7', attempt: 2, previousAttemptDetails: interrupted })) as Promise<string>,
      (error: unknown) => {
        assert.ok(error instanceof ApplicationFailure);
        assert.equal(error.type, McpFailureTypes.notRepeated);
        assert.equal(error.nonRetryable, true);
        return true;
      },
    );
    assert.equal(calls, 0, 'not called again');
    assert.equal(
      await sum?.run({}, context({ callId: 'call-8', attempt: 2, previousAttemptDetails: interrupted })),
      'done',
      'an idempotent tool is',
    );

    failNext = true;
    const first = context({ callId: 'call-9' });
    await assert.rejects(
      echo?.run({}, first) as Promise<string>,
      (error: unknown) =>
        error instanceof ApplicationFailure && error.type === McpFailureTypes.unavailable && !error.nonRetryable,
    );
    assert.deepEqual(first.states, [{ mcpRequest: 'not-sent', callId: 'call-9' }]);
    // Even if the heartbeat that said so was lost, this worker remembers the request never left.
    assert.equal(
      await echo?.run(
        {},
        context({ callId: 'call-9', attempt: 2, previousAttemptDetails: { mcpRequest: 'sending', callId: 'call-9' } }),
      ),
      'done',
    );
  });
});

describe('tool groups', () => {
  const tool = (name: string, serverToolName?: string) => ({
    name,
    description: '',
    parameters: { type: 'object' },
    run: async () => '',
    ...(serverToolName ? { serverToolName } : {}),
  });

  test('a name two sources share is refused, naming both', () => {
    assert.throws(
      () =>
        combineToolGroups([
          { source: 'built-in', tools: [tool('search')] },
          { source: 'MCP server "web"', tools: [tool('search', 'search')] },
        ]),
      (error: unknown) =>
        error instanceof ToolNameClashError &&
        error.involvesMcp &&
        /Two tools are named "search": the tool "search" of MCP server "web" and the built-in tool "search"/.test(
          error.message,
        ),
    );
    assert.throws(
      () =>
        combineToolGroups([
          { source: 'MCP server "a"', tools: [tool('echo', 'echo')] },
          { source: 'MCP server "b"', tools: [tool('echo', 'echo')] },
        ]),
      /the tool "echo" of MCP server "b" and the tool "echo" of MCP server "a"/,
    );
    const groups = [
      { source: 'built-in', tools: [tool('search')] },
      { source: 'MCP server "memory"', tools: [tool('read_graph', 'read_graph')] },
    ];
    assert.deepEqual(
      combineToolGroups(groups).map((entry) => entry.name),
      ['search', 'read_graph'],
    );
    assert.equal(describeToolNames(groups), 'search, read_graph (mcp memory)');
  });
});
