import type { ToolDefinition } from './tool-definition';

/** Tools from one place, for the clash check and the worker's start banner. */
export interface ToolGroup {
  /** Where the tools come from, in words: `built-in`, `REACT_AGENT_TOOL_MODULES`, `MCP server "memory"`. */
  source: string;
  tools: ToolDefinition[];
}

/** Two tools share a name; the message names both and where each comes from. */
export class ToolNameClashError extends Error {
  override readonly name = 'ToolNameClashError';
  constructor(
    message: string,
    /** Whether an MCP server's tool is one of the two. */
    readonly involvesMcp: boolean,
  ) {
    super(message);
  }
}

function describeOrigin(tool: ToolDefinition, source: string): string {
  const own = (tool as { serverToolName?: string }).serverToolName;
  if (source.startsWith('MCP')) return `the tool "${own ?? tool.name}" of ${source}`;
  return source === 'built-in' ? `the built-in tool "${tool.name}"` : `the tool "${tool.name}" from ${source}`;
}

/**
 * All tools of all groups, in order.
 * @throws ToolNameClashError when two share a name, naming both, e.g. `the tool "search" of MCP server "web" and the built-in tool "search"`.
 */
export function combineToolGroups(groups: ToolGroup[]): ToolDefinition[] {
  const seen = new Map<string, { source: string; tool: ToolDefinition }>();
  const all: ToolDefinition[] = [];
  for (const group of groups) {
    for (const tool of group.tools) {
      const earlier = seen.get(tool.name);
      if (earlier) {
        throw new ToolNameClashError(
          `Two tools are named "${tool.name}": ${describeOrigin(tool, group.source)} and ${describeOrigin(earlier.tool, earlier.source)}. ` +
            `Give the MCP server a "toolPrefix", leave the tool out with its server's "tools" list, or select one with REACT_AGENT_TOOLS.`,
          group.source.startsWith('MCP') || earlier.source.startsWith('MCP'),
        );
      }
      seen.set(tool.name, { source: group.source, tool });
      all.push(tool);
    }
  }
  return all;
}

/** `name` or `name (mcp server)` for each tool, for the start banner. */
export function describeToolNames(groups: ToolGroup[]): string {
  return groups
    .flatMap((group) =>
      group.tools.map((tool) =>
        group.source.startsWith('MCP server')
          ? `${tool.name} (mcp ${group.source.slice('MCP server '.length).replace(/"/g, '')})`
          : tool.name,
      ),
    )
    .join(', ');
}
