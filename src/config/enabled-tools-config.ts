import { toolNamesFromList } from '../core/tool-spec';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

/** The research tools a worker can offer. */
export const RESEARCH_TOOL_NAMES = ['search', 'visit', 'python', 'parse_file'] as const;
export type ResearchToolName = (typeof RESEARCH_TOOL_NAMES)[number];

/** What `REACT_AGENT_TOOLS` selects: built-in tools, and MCP tools by name or by server. */
export interface ToolSelection {
  builtIns: ResearchToolName[];
  /**
   * The other names (MCP tools as the model sees them, `mcp:<server>` for all of a server's),
   * checked by the worker once its MCP servers listed their tools; undefined: every MCP tool.
   */
  mcp?: string[];
}

/**
 * Reads `REACT_AGENT_TOOLS`, a comma-separated list of tool names, or `none`. Default: the four
 * built-ins and, when `REACT_AGENT_MCP_CONFIG` names servers, all their tools. Without an MCP
 * configuration a name other than a built-in's is refused here.
 * @throws ConfigurationError naming an unknown tool.
 */
export function loadToolSelection(environment: Environment = process.env): ToolSelection {
  const value = environment.REACT_AGENT_TOOLS?.trim();
  if (value === undefined || value === '') return { builtIns: [...RESEARCH_TOOL_NAMES] };
  const names = toolNamesFromList(value);
  const builtIns = names.filter((name): name is ResearchToolName =>
    (RESEARCH_TOOL_NAMES as readonly string[]).includes(name),
  );
  const others = names.filter((name) => !(RESEARCH_TOOL_NAMES as readonly string[]).includes(name));
  if (others.length && readString(environment, 'REACT_AGENT_MCP_CONFIG') === undefined) {
    throw new ConfigurationError(
      'REACT_AGENT_TOOLS',
      `REACT_AGENT_TOOLS names unknown tools: ${others.join(', ')}. Use a comma-separated list of ${RESEARCH_TOOL_NAMES.join(', ')}, or none (MCP tools need REACT_AGENT_MCP_CONFIG).`,
    );
  }
  return { builtIns, mcp: others };
}

/**
 * Which built-in research tools the worker registers: the built-ins `REACT_AGENT_TOOLS` names
 * (`search`, `visit`, `python`, `parse_file`, or `none`). Default: all four.
 * @throws ConfigurationError naming an unknown tool.
 */
export function loadEnabledTools(environment: Environment = process.env): ResearchToolName[] {
  return loadToolSelection(environment).builtIns;
}
