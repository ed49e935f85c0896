import { toolNamesFromList } from '../core/tool-spec';
import { ConfigurationError } from './configuration-error';
import type { Environment } from './environment-values';

/** The research tools a worker can offer. */
export const RESEARCH_TOOL_NAMES = ['search', 'visit', 'python', 'parse_file'] as const;
export type ResearchToolName = (typeof RESEARCH_TOOL_NAMES)[number];

/**
 * Which research tools the worker registers: `REACT_AGENT_TOOLS`, a comma-separated list of
 * `search`, `visit`, `python`, `parse_file`, or `none`. Default: all four.
 * @throws ConfigurationError naming an unknown tool.
 */
export function loadEnabledTools(environment: Environment = process.env): ResearchToolName[] {
  const value = environment.REACT_AGENT_TOOLS?.trim();
  if (value === undefined || value === '') return [...RESEARCH_TOOL_NAMES];
  const names = toolNamesFromList(value);
  if (names.length === 0) return [];
  const unknown = names.filter((name) => !(RESEARCH_TOOL_NAMES as readonly string[]).includes(name));
  if (unknown.length) {
    throw new ConfigurationError('REACT_AGENT_TOOLS', `REACT_AGENT_TOOLS names unknown tools: ${unknown.join(', ')}. Use a comma-separated list of ${RESEARCH_TOOL_NAMES.join(', ')}, or none.`);
  }
  return names as ResearchToolName[];
}
