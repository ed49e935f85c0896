import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';
import { resolveVariables } from './mcp-variables';
import type { McpServerOptions, McpServerSettings } from '../domain/mcp-server-settings';

export type {
  McpHttpServerSettings,
  McpServerOptions,
  McpServerSettings,
  McpStdioServerSettings,
} from '../domain/mcp-server-settings';

/** The variable naming the MCP configuration file. */
export const MCP_CONFIG_VARIABLE = 'REACT_AGENT_MCP_CONFIG';

/** Default longest wait for one tool call of an MCP server. */
export const DEFAULT_MCP_TIMEOUT_SECONDS = 120;

export interface McpConfig {
  /** The file it was read from. */
  file: string;
  /** Servers in the file's order, without the `disabled` ones. */
  servers: McpServerSettings[];
}

const COMMON_FIELDS = [
  'type',
  'transport',
  'tools',
  'toolPrefix',
  'timeoutSeconds',
  'requiresApproval',
  'maxConcurrentCalls',
  'optional',
  'idempotentTools',
  'disabled',
];
const STDIO_FIELDS = ['command', 'args', 'env', 'cwd'];
const HTTP_FIELDS = ['url', 'headers'];
/** `type`/`transport` values as Claude Desktop, Cursor and VS Code write them. */
const TRANSPORT_NAMES: Record<string, 'stdio' | 'http'> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamablehttp: 'http',
  streamable_http: 'http',
};
const TOOL_PREFIX = /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/;

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses and checks an MCP configuration (`{"mcpServers": {...}}`, the format of Claude Desktop,
 * Cursor and VS Code) and resolves `${VAR}` in `env` and `headers` from `environment`. Pure: reads
 * no file and no `process.env`.
 * @throws ConfigurationError naming the file, the server and the field (or the unset variable).
 */
export function parseMcpConfig(text: string, options: { file: string; environment: Environment }): McpConfig {
  const { file, environment } = options;
  const fail = (message: string): never => {
    throw new ConfigurationError(MCP_CONFIG_VARIABLE, `${MCP_CONFIG_VARIABLE} (${file}): ${message}`);
  };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return fail(`not valid JSON: ${(error as Error).message}.`);
  }
  if (!isObject(document)) return fail(`expected an object {"mcpServers": {...}}, got ${typeName(document)}.`);
  const entries = document.mcpServers;
  if (!isObject(entries)) {
    return fail(
      `expected "mcpServers", an object of servers by name (as Claude Desktop writes it), got ${entries === undefined ? 'none' : typeName(entries)}.`,
    );
  }
  const servers: McpServerSettings[] = [];
  for (const [name, entry] of Object.entries(entries)) {
    const server = parseServer(name, entry, { file, environment, fail });
    if (server) servers.push(server);
  }
  return { file, servers };
}

function parseServer(
  name: string,
  entry: unknown,
  context: { file: string; environment: Environment; fail: (message: string) => never },
): McpServerSettings | undefined {
  const { fail, environment, file } = context;
  const at = (field?: string) => `server "${name}"${field ? `, field "${field}"` : ''}`;
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (name.trim() === '' || /[,\u0000-\u001f]/.test(name))
    fail(`the server name ${JSON.stringify(name)} is not usable: give it a name without commas.`);
  if (!isObject(entry))
    return fail(
      `${at()}: expected an object with "command" (stdio) or "url" (Streamable HTTP), got ${typeName(entry)}.`,
    );

  const known = [...COMMON_FIELDS, ...STDIO_FIELDS, ...HTTP_FIELDS];
  const unknown = Object.keys(entry).filter((key) => !known.includes(key));
  if (unknown.length)
    fail(
      `${at()}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `"${key}"`).join(', ')}. Known fields: ${known.join(', ')}.`,
    );

  const optionalBoolean = (field: string, fallback: boolean): boolean => {
    const value = entry[field];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') fail(`${at(field)} must be true or false, got ${typeName(value)}.`);
    return value as boolean;
  };
  if (optionalBoolean('disabled', false)) return undefined;

  const stringList = (field: string): string[] | undefined => {
    const value = entry[field];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
      fail(`${at(field)} must be an array of strings, got ${typeName(value)}.`);
    return value as string[];
  };
  const booleanOrList = (field: string): boolean | string[] => {
    const value = entry[field];
    if (value === undefined) return false;
    if (typeof value === 'boolean') return value;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
      fail(`${at(field)} must be true, false or an array of the server's tool names, got ${typeName(value)}.`);
    return value as string[];
  };
  const positive = (field: string, integer: boolean, maximum: number): number | undefined => {
    const value = entry[field];
    if (value === undefined) return undefined;
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value <= 0 ||
      value > maximum ||
      (integer && !Number.isInteger(value))
    ) {
      fail(
        `${at(field)} must be a positive ${integer ? 'integer' : 'number'} of at most ${maximum}, got ${typeName(value)}.`,
      );
    }
    return value as number;
  };
  const stringMap = (field: string): { values: Record<string, string>; secrets: string[] } => {
    const value = entry[field];
    if (value === undefined) return { values: {}, secrets: [] };
    if (!isObject(value)) return fail(`${at(field)} must be an object of strings, got ${typeName(value)}.`);
    const values: Record<string, string> = {};
    const secrets: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      // Never echo the value: it may be a key written into the file by mistake.
      if (typeof item !== 'string')
        fail(
          `${at(field)}: "${key}" must be a string, got ${Array.isArray(item) ? 'an array' : item === null ? 'null' : typeof item}.`,
        );
      const resolved = resolveVariables(
        item as string,
        `${MCP_CONFIG_VARIABLE} (${file}): server "${name}", ${field}.${key}`,
        environment,
      );
      values[key] = resolved.value;
      secrets.push(...resolved.secrets);
    }
    return { values, secrets };
  };

  const declared = entry.type ?? entry.transport;
  if (entry.type !== undefined && entry.transport !== undefined && entry.type !== entry.transport)
    fail(`${at()}: "type" and "transport" disagree; give one.`);
  let transport: 'stdio' | 'http' | undefined;
  if (declared !== undefined) {
    transport = typeof declared === 'string' ? TRANSPORT_NAMES[declared.toLowerCase()] : undefined;
    if (!transport) {
      fail(
        `${at(entry.type !== undefined ? 'type' : 'transport')}: unknown transport ${JSON.stringify(declared)}. This worker speaks "stdio" (give "command") and Streamable HTTP ("http", give "url"); ` +
          `the old HTTP+SSE transport is not supported.`,
      );
    }
  }
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) fail(`${at()}: give either "command" (stdio) or "url" (Streamable HTTP), not both.`);
  transport ??= hasUrl ? 'http' : hasCommand ? 'stdio' : undefined;
  if (!transport)
    fail(`${at()}: missing "command" (a stdio server the worker starts) or "url" (a Streamable HTTP server).`);

  const misplaced = Object.keys(entry).filter((key) =>
    (transport === 'stdio' ? HTTP_FIELDS : STDIO_FIELDS).includes(key),
  );
  if (misplaced.length)
    fail(
      `${at()}: ${misplaced.map((key) => `"${key}"`).join(', ')} ${misplaced.length > 1 ? 'do' : 'does'} not apply to a ${transport === 'stdio' ? 'stdio' : 'Streamable HTTP'} server.`,
    );

  const toolPrefix = entry.toolPrefix ?? '';
  if (typeof toolPrefix !== 'string' || (toolPrefix !== '' && !TOOL_PREFIX.test(toolPrefix))) {
    fail(
      `${at('toolPrefix')} must be letters, digits, '_' and '-', starting with a letter or '_' (at most 32), got ${typeName(toolPrefix)}.`,
    );
  }
  const tools = stringList('tools');
  if (tools && tools.length === 0)
    fail(`${at('tools')} is empty: list the tools to offer, or leave it out for all, or set "disabled": true.`);
  const maxConcurrentCalls = positive('maxConcurrentCalls', true, 1_000);
  const options: McpServerOptions = {
    name,
    ...(tools ? { tools } : {}),
    toolPrefix: toolPrefix as string,
    timeoutSeconds: positive('timeoutSeconds', false, 86_400) ?? DEFAULT_MCP_TIMEOUT_SECONDS,
    requiresApproval: booleanOrList('requiresApproval'),
    ...(maxConcurrentCalls === undefined ? {} : { maxConcurrentCalls }),
    optional: optionalBoolean('optional', false),
    idempotentTools: booleanOrList('idempotentTools'),
    secrets: [],
  };

  if (transport === 'stdio') {
    const command = entry.command;
    if (typeof command !== 'string' || command.trim() === '')
      return fail(
        `${at('command')} must be the program to start (a non-empty string), got ${command === undefined ? 'none' : typeName(command)}.`,
      );
    const args = stringList('args') ?? [];
    const cwd = entry.cwd;
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd.trim() === ''))
      fail(`${at('cwd')} must be a directory (a non-empty string), got ${typeName(cwd)}.`);
    const env = stringMap('env');
    return {
      ...options,
      secrets: env.secrets,
      transport: 'stdio',
      command,
      args,
      env: env.values,
      ...(typeof cwd === 'string' ? { cwd: isAbsolute(cwd) ? cwd : resolve(dirname(file), cwd) } : {}),
    };
  }

  const url = entry.url;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    fail(
      `${at('url')} must be an http(s) URL such as http://localhost:3001/mcp, got ${url === undefined ? 'none' : typeName(url)}.`,
    );
  const headers = stringMap('headers');
  return { ...options, secrets: headers.secrets, transport: 'http', url: url as string, headers: headers.values };
}

/**
 * The MCP servers named by `REACT_AGENT_MCP_CONFIG` (a path, relative to the current directory),
 * or undefined when it is unset.
 * @throws ConfigurationError when the file cannot be read or is not a valid configuration.
 */
export function loadMcpConfig(environment: Environment = process.env): McpConfig | undefined {
  const path = readString(environment, MCP_CONFIG_VARIABLE);
  if (path === undefined) return undefined;
  const file = resolve(process.cwd(), path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigurationError(
      MCP_CONFIG_VARIABLE,
      `${MCP_CONFIG_VARIABLE}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Point it at a JSON file {"mcpServers": {...}} (see examples/mcp.json).`,
    );
  }
  return parseMcpConfig(text, { file, environment });
}
