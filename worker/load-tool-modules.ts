import type { ToolDefinition } from '../activities';

/**
 * Lets the compiled worker (dist/worker/main.js, plain Node) load tool modules written in
 * TypeScript, as the worker run through tsx always could.
 */
async function registerTypeScript(): Promise<void> {
  if (__filename.endsWith('.ts')) return; // already running through tsx
  (require('tsx/cjs/api') as typeof import('tsx/cjs/api')).register();
  (await import('tsx/esm/api')).register();
}

/** Loads `tools` from each module path; fails naming the module when one has none. */
export async function loadToolModules(paths: string[]): Promise<ToolDefinition[]> {
  if (paths.some((path) => /\.[cm]?tsx?$/.test(path))) await registerTypeScript();
  const tools: ToolDefinition[] = [];
  for (const path of paths) {
    let loaded: { tools?: unknown };
    try {
      const imported = (await import(path)) as { tools?: unknown; default?: { tools?: unknown } };
      // A CommonJS module whose exports Node cannot list (TypeScript compiled on the fly) comes as `default`.
      loaded = imported.tools === undefined && imported.default ? imported.default : imported;
    } catch (error) {
      throw new Error(`REACT_AGENT_TOOL_MODULES: could not load ${path}: ${(error as Error).message}`);
    }
    if (!Array.isArray(loaded.tools))
      throw new Error(`REACT_AGENT_TOOL_MODULES: ${path} does not export an array named "tools".`);
    tools.push(...(loaded.tools as ToolDefinition[]));
  }
  return tools;
}
