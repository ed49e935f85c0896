import { isAbsolute, resolve } from 'node:path';
import type { Environment } from './environment-values';

/**
 * Extra tool modules a worker loads: `REACT_AGENT_TOOL_MODULES`, a comma-separated list of
 * module paths (relative to the current directory) that each export `tools`, an array of
 * `ToolDefinition`. Default: none (only the built-in tools).
 */
export function loadToolModulePaths(environment: Environment = process.env): string[] {
  const value = environment.REACT_AGENT_TOOL_MODULES ?? '';
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => (isAbsolute(entry) ? entry : resolve(process.cwd(), entry)));
}

/**
 * A prebuilt workflow bundle (`REACT_AGENT_WORKFLOW_BUNDLE`, from `bundleWorkflowCode`), so a
 * worker starts without running webpack. Default: none (the worker bundles workflows/ itself).
 */
export function loadWorkflowBundlePath(environment: Environment = process.env): string | undefined {
  const value = environment.REACT_AGENT_WORKFLOW_BUNDLE?.trim();
  return value ? resolve(process.cwd(), value) : undefined;
}
