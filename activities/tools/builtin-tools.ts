import type { ToolDefinition } from './tool-definition';

/**
 * The tools every worker offers. The research tools (search, visit, python, parse_file) are
 * added here; extra tools come from REACT_AGENT_TOOL_MODULES.
 */
export function builtinTools(): ToolDefinition[] {
  return [];
}
