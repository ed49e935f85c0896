/**
 * One MCP server as the worker hands it to the tool source, already checked and with `${VAR}`s
 * resolved (src/config/mcp-config.ts builds it from REACT_AGENT_MCP_CONFIG; activities never
 * read configuration). `env`, `headers` and `secrets` hold secrets: never log or return them.
 */
export interface McpServerOptions {
  name: string;
  /** Allow-list of the server's own tool names; undefined: all. */
  tools?: string[];
  /** Put before each tool name as the model sees it ('' for none). */
  toolPrefix: string;
  /** Longest wait for one call, in seconds. */
  timeoutSeconds: number;
  /** All tools (true), none (false) or these (the server's names) wait for an approval. */
  requiresApproval: boolean | string[];
  /** Calls running at once in this worker; undefined: no limit but the worker's slots. */
  maxConcurrentCalls?: number;
  /** A start failure leaves the server out instead of refusing the worker start. */
  optional: boolean;
  /** Tools safe to call again after a request may have reached the server: all (true), none (false) or these. */
  idempotentTools: boolean | string[];
  /** Values to keep out of observations, failures and logs (the resolved `${VAR}`s). */
  secrets: string[];
}

export interface McpStdioServerSettings extends McpServerOptions {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServerSettings extends McpServerOptions {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
}

export type McpServerSettings = McpStdioServerSettings | McpHttpServerSettings;

/** Whether `list` (true, false or names) covers the server's tool `name`. */
export function coversTool(list: boolean | string[], name: string): boolean {
  return Array.isArray(list) ? list.includes(name) : list;
}

/** How the server is reached, for logs: never the environment, headers or the URL's query. */
export function describeServer(settings: McpServerSettings): string {
  if (settings.transport === 'stdio') return `stdio: ${[settings.command, ...settings.args].join(' ')}`;
  const url = new URL(settings.url);
  return `Streamable HTTP: ${url.protocol}//${url.host}${url.pathname}`;
}
