import type { ToolDefinition } from '../activities';
import type { ChatModel } from '../activities/model/chat-model';
import type { Environment } from '../src/config';
import { loadToolModulePaths } from '../src/config/tool-modules-config';
import { loadToolModules } from './load-tool-modules';
import { combineToolGroups, startMcpTools, type ToolGroup } from './mcp-tools';
import { createResearchTools } from './research-tools';

/** The tools a worker offers, by where they come from, and what stops the MCP servers again. */
export interface WorkerTools {
  /** Built-ins, `REACT_AGENT_TOOL_MODULES`, then one group per MCP server, in that order. */
  groups: ToolGroup[];
  /** Every tool of every group, checked for clashing names. */
  tools: ToolDefinition[];
  /** Optional MCP servers left out because they did not start, with why. */
  skippedServers: Array<{ server: string; reason: string }>;
  /** The MCP servers' `${VAR}` values, to be redacted with the worker's other secrets. */
  secrets: string[];
  /** Stops the stdio MCP servers and closes the HTTP sessions. */
  close(): Promise<void>;
}

export interface WorkerToolsOptions {
  environment: Environment;
  /** Lines about each tool's setup (search backend, python isolation, each MCP server's tools). */
  log: (line: string) => void;
  /** The model, asked for only by a tool that calls the model (visit's summaries). */
  modelClient: () => { chatModel: ChatModel; model: string };
  /** Whether to start the MCP servers (a model-only worker does not). Default true. */
  mcp?: boolean;
}

/**
 * Builds the tools a worker with this environment offers: the built-ins `REACT_AGENT_TOOLS`
 * enables, the modules of `REACT_AGENT_TOOL_MODULES`, and the tools of the MCP servers of
 * `REACT_AGENT_MCP_CONFIG` (started here). The worker and `react-agent tools` both build them so.
 * @throws ConfigurationError naming the variable, as the worker refuses to start.
 */
export async function startWorkerTools(options: WorkerToolsOptions): Promise<WorkerTools> {
  const builtIns = createResearchTools({
    environment: options.environment,
    modelClient: options.modelClient,
    log: options.log,
  });
  const modules = await loadToolModules(loadToolModulePaths(options.environment));
  const mcp =
    options.mcp === false
      ? { groups: [], skipped: [], secrets: [], close: async () => undefined }
      : await startMcpTools(options.environment, options.log);
  const groups: ToolGroup[] = [
    { source: 'built-in', tools: builtIns },
    { source: 'REACT_AGENT_TOOL_MODULES', tools: modules },
    ...mcp.groups,
  ];
  try {
    return {
      groups,
      tools: combineToolGroups(groups),
      skippedServers: mcp.skipped,
      secrets: mcp.secrets,
      close: mcp.close,
    };
  } catch (error) {
    await mcp.close();
    throw error;
  }
}
