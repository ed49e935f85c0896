import type { ListedTool, ToolListing } from '../domain/tool-listing';

/**
 * What `react-agent tools` prints: the tools a worker with the current environment offers, as
 * worker/list-tools.ts reports them (JSON on its stdout, src/domain/tool-listing.ts), for people (a
 * table) or scripts (`--json`).
 */

export type { ListedTool, ToolListing };

/** Longest description the table shows. */
export const SHORT_DESCRIPTION_CHARACTERS = 72;

/** A description's first sentence (or line), cut to `maxCharacters` with an ellipsis. */
export function shortDescription(description: string, maxCharacters = SHORT_DESCRIPTION_CHARACTERS): string {
  const firstLine = description.trim().split('\n')[0]?.trim() ?? '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(firstLine)?.[1] ?? firstLine;
  return sentence.length <= maxCharacters ? sentence : `${sentence.slice(0, maxCharacters - 1).trimEnd()}…`;
}

/** Where a tool comes from, in words: `built-in`, `module`, `mcp everything` (`mcp web, its echo` when renamed). */
export function describeSource(tool: ListedTool): string {
  if (tool.source !== 'mcp') return tool.source;
  return `mcp ${tool.server ?? '?'}${tool.serverToolName && tool.serverToolName !== tool.name ? `, its ${tool.serverToolName}` : ''}`;
}

/** The listing as a table: name, source, approval, short description; then the servers left out; then the totals. */
export function formatToolListing(listing: ToolListing): string {
  if (listing.tools.length === 0 && listing.skippedServers.length === 0) {
    return 'This worker would offer no tools (REACT_AGENT_TOOLS=none, and no tool modules or MCP servers).';
  }
  const rows = listing.tools.map((tool) => [
    tool.name,
    describeSource(tool),
    tool.requiresApproval ? 'required' : '-',
    shortDescription(tool.description),
  ]);
  const header = ['TOOL', 'SOURCE', 'APPROVAL', 'DESCRIPTION'];
  const widths = header
    .slice(0, 3)
    .map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 3 ? cell.padEnd(widths[column] as number) : cell))
      .join('  ')
      .trimEnd();
  const lines = listing.tools.length ? [line(header), ...rows.map(line)] : [];
  for (const skipped of listing.skippedServers)
    lines.push(`MCP server "${skipped.server}" left out (optional): ${skipped.reason.split('\n')[0]}`);
  const mcp = listing.tools.filter((tool) => tool.source === 'mcp');
  const servers = new Set(mcp.map((tool) => tool.server));
  const approval = listing.tools.filter((tool) => tool.requiresApproval).length;
  lines.push(
    `${listing.tools.length} tool${listing.tools.length === 1 ? '' : 's'}: ${listing.tools.length - mcp.length} built-in or from modules, ${mcp.length} from ${servers.size} MCP server${servers.size === 1 ? '' : 's'}` +
      (approval ? `; ${approval} need${approval === 1 ? 's' : ''} approval` : '') +
      '.',
  );
  return lines.join('\n');
}

/**
 * Reads the listing worker/list-tools.ts printed.
 * @throws Error when it is not a listing (a broken build, say), quoting its start.
 */
export function parseToolListing(text: string): ToolListing {
  let parsed: Partial<ToolListing> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<ToolListing>;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !Array.isArray(parsed.tools) || !Array.isArray(parsed.skippedServers)) {
    throw new Error(`the tool listing was not readable: ${JSON.stringify(text.slice(0, 200))}`);
  }
  return { tools: parsed.tools, skippedServers: parsed.skippedServers };
}
