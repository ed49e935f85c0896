import type { McpServerSettings } from '../../../src/domain/mcp-server-settings';

export type {
  McpHttpServerSettings,
  McpServerOptions,
  McpServerSettings,
  McpStdioServerSettings,
} from '../../../src/domain/mcp-server-settings';

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
