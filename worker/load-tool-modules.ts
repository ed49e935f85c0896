import type { ToolDefinition } from '../activities';

/** Loads `tools` from each module path; fails naming the module when one has none. */
export async function loadToolModules(paths: string[]): Promise<ToolDefinition[]> {
  const tools: ToolDefinition[] = [];
  for (const path of paths) {
    let loaded: { tools?: unknown };
    try {
      loaded = (await import(path)) as { tools?: unknown };
    } catch (error) {
      throw new Error(`REACT_AGENT_TOOL_MODULES: could not load ${path}: ${(error as Error).message}`);
    }
    if (!Array.isArray(loaded.tools)) throw new Error(`REACT_AGENT_TOOL_MODULES: ${path} does not export an array named "tools".`);
    tools.push(...(loaded.tools as ToolDefinition[]));
  }
  return tools;
}
