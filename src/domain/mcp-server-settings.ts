/**
 * One MCP server as the worker's configuration describes it (REACT_AGENT_MCP_CONFIG, read by
 * src/config/mcp-config.ts) and as the MCP tool source (activities/tools/mcp/) is handed it,
 * already checked and with `${VAR}`s resolved: the one shape both sides share. `env`, `headers`
 * and `secrets` hold secrets: never log or return them. Plain data, so any floor may import it.
 */

/** What every MCP server entry may say besides how to reach it. */
export interface McpServerOptions {
  /** The key of the entry in `mcpServers`. */
  name: string;
  /** Allow-list of the server's own tool names; undefined: all of its tools. */
  tools?: string[];
  /** Put before each of the server's tool names as the model sees them ('' for none). */
  toolPrefix: string;
  /** Longest wait for one call, in seconds (the activity gets a little more, for a reconnect). */
  timeoutSeconds: number;
  /** Calls wait for an approval: all of the server's tools (true), none (false) or these (its own names). */
  requiresApproval: boolean | string[];
  /** Calls to this server running at once in one worker; undefined: no limit but the worker's slots. */
  maxConcurrentCalls?: number;
  /** When the server cannot be started, the worker starts without its tools (and says so) instead of refusing to start. */
  optional: boolean;
  /** Tools safe to call twice: all (true), none (false) or these; only they are retried after a failure once the request may have reached the server. */
  idempotentTools: boolean | string[];
  /** The values `${VAR}`s were replaced with, to be kept out of observations, failures and logs. Never print. */
  secrets: string[];
}

/** A server the worker starts and talks to over its stdin/stdout. */
export interface McpStdioServerSettings extends McpServerOptions {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Added to the few variables the SDK passes on (PATH, HOME, …); `${VAR}`s resolved. Never print. */
  env: Record<string, string>;
  /** Working directory (relative to the config file's folder); default the worker's. */
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerSettings extends McpServerOptions {
  transport: 'http';
  url: string;
  /** Sent with every request; `${VAR}`s resolved. Never print. */
  headers: Record<string, string>;
}

export type McpServerSettings = McpStdioServerSettings | McpHttpServerSettings;
