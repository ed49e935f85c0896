import type { ToolDefinition } from '../activities';
import { McpStartFailure, startMcpToolSource } from '../activities/tools/mcp/mcp-tool-source';
import type { McpToolDefinition } from '../activities/tools/mcp/mcp-tool-definitions';
import {
  combineToolGroups as combineGroups,
  describeToolNames,
  ToolNameClashError,
  type ToolGroup,
} from '../activities/tools/tool-groups';
import { describeServer } from '../activities/tools/mcp/mcp-server-settings';
import { ConfigurationError, type Environment } from '../src/config';
import { loadToolSelection } from '../src/config/enabled-tools-config';
import { loadMcpConfig, MCP_CONFIG_VARIABLE } from '../src/config/mcp-config';

export interface McpTools {
  /** One group per MCP server that started (its tools that REACT_AGENT_TOOLS selects). */
  groups: ToolGroup[];
  /** Servers marked `optional` that did not start (left out), with why. */
  skipped: Array<{ server: string; reason: string }>;
  /** The values the `${VAR}`s of every server's env and headers resolved to: the worker redacts them everywhere. */
  secrets: string[];
  /** Stops the stdio servers and closes the HTTP sessions. */
  close(): Promise<void>;
}

/**
 * Starts the MCP servers of REACT_AGENT_MCP_CONFIG (none when it is unset) and returns their
 * tools that REACT_AGENT_TOOLS selects (all by default; a tool name as the model sees it, or
 * `mcp:<server>` for all of a server's tools). A server that fails to start stops the worker with
 * a message naming it and its stderr, unless it is `optional`.
 */
export async function startMcpTools(environment: Environment, log: (line: string) => void): Promise<McpTools> {
  const config = loadMcpConfig(environment);
  const selection = loadToolSelection(environment);
  if (!config || config.servers.length === 0) {
    if (selection.mcp?.length) refuseUnknown(selection.mcp, []);
    return { groups: [], skipped: [], secrets: [], close: async () => undefined };
  }
  const secrets = config.servers.flatMap((server) => server.secrets);
  let source;
  try {
    source = await startMcpToolSource(config.servers, {
      log: (line) => log(line),
      clientInfo: { name: 'durable-react-agent', version: '0.1.0' },
    });
  } catch (error) {
    if (error instanceof McpStartFailure) {
      throw new ConfigurationError(
        MCP_CONFIG_VARIABLE,
        `${MCP_CONFIG_VARIABLE} (${config.file}): ${error.message}\nFix the server's entry, or mark it "optional": true to start the worker without it.`,
      );
    }
    throw error;
  }
  for (const skipped of source.skipped)
    log(`mcp ${skipped.server}: left out (optional): ${skipped.reason.split('\n').join(' ')}`);
  try {
    const selected = selectTools(source.tools, selection.mcp, source.skipped.length > 0, log);
    const groups = source.connections.map((connection) => {
      const tools = selected.filter((tool) => tool.server === connection.name);
      const offered = source.tools.filter((tool) => tool.server === connection.name).length;
      const pid = connection.pid === undefined ? '' : `, pid ${connection.pid}`;
      log(
        `mcp ${connection.name} (${describeServer(connection.settings)}${pid}): ${tools.map((tool) => (tool.name === tool.serverToolName ? tool.name : `${tool.name} (its ${tool.serverToolName})`)).join(', ') || 'no tools'}` +
          (tools.length < offered ? ` — ${tools.length} of ${offered} selected` : ''),
      );
      return { source: `MCP server "${connection.name}"`, tools };
    });
    return { groups, skipped: source.skipped, secrets, close: () => source.close() };
  } catch (error) {
    await source.close();
    throw error;
  }
}

function refuseUnknown(unknown: string[], available: string[]): never {
  throw new ConfigurationError(
    'REACT_AGENT_TOOLS',
    `REACT_AGENT_TOOLS names tools this worker does not have: ${unknown.join(', ')}. Built-ins: search, visit, python, parse_file; MCP tools: ${available.join(', ') || 'none'} (or mcp:<server> for all of a server's).`,
  );
}

/** The MCP tools REACT_AGENT_TOOLS selects; undefined selects all. Unknown names are refused (only warned about when an optional server is missing). */
function selectTools(
  tools: McpToolDefinition[],
  names: string[] | undefined,
  someSkipped: boolean,
  log: (line: string) => void,
): McpToolDefinition[] {
  if (names === undefined) return tools;
  const servers = new Set(tools.map((tool) => tool.server));
  const unknown = names.filter((name) =>
    name.startsWith('mcp:') ? !servers.has(name.slice(4)) : !tools.some((tool) => tool.name === name),
  );
  if (unknown.length) {
    if (!someSkipped)
      refuseUnknown(
        unknown,
        tools.map((tool) => tool.name),
      );
    log(`REACT_AGENT_TOOLS: ${unknown.join(', ')} not offered (an optional MCP server is missing)`);
  }
  return tools.filter((tool) => names.includes(tool.name) || names.includes(`mcp:${tool.server}`));
}

/** All tools of all groups; a name two share stops the worker at start, naming both. */
export function combineToolGroups(groups: ToolGroup[]): ToolDefinition[] {
  try {
    return combineGroups(groups);
  } catch (error) {
    if (error instanceof ToolNameClashError)
      throw new ConfigurationError(error.involvesMcp ? MCP_CONFIG_VARIABLE : 'REACT_AGENT_TOOL_MODULES', error.message);
    throw error;
  }
}

export { describeToolNames, type ToolGroup };
