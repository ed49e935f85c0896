import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpServerConnection, McpServerStartError, type McpConnectionOptions } from './mcp-server-connection';
import { describeServer, type McpServerSettings } from './mcp-server-settings';
import { mcpToolDefinitions, type McpToolDefinition } from './mcp-tool-definitions';

/** The tools of the worker's MCP servers, and the connections that serve them. */
export interface McpToolSource {
  tools: McpToolDefinition[];
  connections: McpServerConnection[];
  /** Servers marked `optional` that could not be started, with why. */
  skipped: Array<{ server: string; reason: string }>;
  /** Closes every connection (stdio servers are stopped). */
  close(): Promise<void>;
}

/** One or more servers failed to start; the message names each, with its stderr tail. */
export class McpStartFailure extends Error {
  override readonly name = 'McpStartFailure';
  constructor(readonly failures: Array<{ server: string; message: string }>) {
    super(failures.map((failure) => failure.message).join('\n'));
  }
}

/**
 * Starts every configured server at once, lists its tools and turns them into ToolDefinitions.
 * A server that fails (does not start, does not answer, lacks a tool its allow-list names) is
 * left out when it is `optional`; otherwise every started server is closed again and this
 * throws `McpStartFailure`, naming each server that failed.
 */
export async function startMcpToolSource(
  servers: McpServerSettings[],
  options: McpConnectionOptions,
): Promise<McpToolSource> {
  const outcomes = await Promise.allSettled(
    servers.map(async (settings) => {
      const connection = await McpServerConnection.start(settings, options);
      let listed: Tool[];
      let tools: McpToolDefinition[];
      try {
        listed = await connection.listTools();
        tools = mcpToolDefinitions(connection, listed);
      } catch (error) {
        await connection.close();
        throw new McpServerStartError(
          settings.name,
          error instanceof McpServerStartError
            ? error.message
            : `MCP server "${settings.name}" (${describeServer(settings)}): ${connection.redact((error as Error).message)}`,
        );
      }
      return { connection, tools };
    }),
  );
  const started = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failures: Array<{ server: string; message: string }> = [];
  const skipped: McpToolSource['skipped'] = [];
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'fulfilled') return;
    const settings = servers[index] as McpServerSettings;
    const message = (outcome.reason as Error)?.message ?? String(outcome.reason);
    if (settings.optional) skipped.push({ server: settings.name, reason: message });
    else failures.push({ server: settings.name, message });
  });
  const close = async () => {
    await Promise.all(started.map(({ connection }) => connection.close()));
  };
  if (failures.length) {
    await close();
    throw new McpStartFailure(failures);
  }
  return {
    tools: started.flatMap(({ tools }) => tools),
    connections: started.map(({ connection }) => connection),
    skipped,
    close,
  };
}
