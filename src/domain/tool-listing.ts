/**
 * The tools a worker offers, as `react-agent tools` shows them: plain data that worker/list-tools.ts
 * prints as JSON and src/cli/tool-listing.ts reads (the two are separate processes, and floors
 * apart), and what `react-agent tools --json` prints.
 */

/** One tool a worker offers. */
export interface ListedTool {
  /** The name the model sees (an MCP tool's with its server's `toolPrefix`). */
  name: string;
  /** Where it comes from: built in, a module of `REACT_AGENT_TOOL_MODULES`, or an MCP server. */
  source: 'built-in' | 'module' | 'mcp';
  /** The MCP server's name in `REACT_AGENT_MCP_CONFIG` (MCP tools only). */
  server?: string;
  /** The tool's own name on its MCP server, when the model sees another (MCP tools only). */
  serverToolName?: string;
  /** Each call waits for an approval (`react-agent approve`). */
  requiresApproval: boolean;
  /** The description the model is given, whole. */
  description: string;
}

/** Everything a worker with this environment offers. */
export interface ToolListing {
  tools: ListedTool[];
  /** `optional` MCP servers that did not start and are left out, with why. */
  skippedServers: Array<{ server: string; reason: string }>;
}
