/**
 * `react-agent tools` runs this (src/cli does not import worker/): it builds the tools a worker
 * with this environment offers — built-ins, tool modules, and the MCP servers' tools, the servers
 * started, listed and closed as the worker does — and prints them as JSON (src/domain/tool-listing.ts)
 * on stdout. Configuration the worker would refuse is printed as the worker prints it, exit code 2.
 */
import { createChatModel } from '../activities/model/chat-model-factory';
import { summaryModelOf } from '../activities/model/summary-chat-model';
import { ConfigurationError, loadModelConfig, loadSummaryModelConfig } from '../src/config';
import type { ListedTool, ToolListing } from '../src/domain/tool-listing';
import type { McpToolDefinition } from '../activities/tools/mcp/mcp-tool-definitions';
import { startWorkerTools } from './worker-tools';

async function main(): Promise<number> {
  const tools = await startWorkerTools({
    environment: process.env,
    // What the worker logs while it builds the tools; the listing says it all.
    log: () => undefined,
    // Visit's page summaries: the summaries' API and model (REACT_AGENT_SUMMARY_MODEL_API, _MODEL), as the worker's.
    modelClient: () => {
      const model = loadModelConfig();
      const runChatModel = createChatModel({ api: model.api, baseUrl: model.baseUrl, apiKey: model.apiKey });
      const summary = summaryModelOf(loadSummaryModelConfig(), runChatModel, model.model);
      return { chatModel: summary.chatModel, model: summary.visitModel };
    },
  });
  try {
    const listed: ListedTool[] = tools.groups.flatMap((group) =>
      group.tools.map((tool): ListedTool => {
        const mcp = group.source.startsWith('MCP server') ? (tool as McpToolDefinition) : undefined;
        return {
          name: tool.name,
          source: mcp ? 'mcp' : group.source === 'built-in' ? 'built-in' : 'module',
          ...(mcp
            ? {
                server: mcp.server,
                ...(mcp.serverToolName !== tool.name ? { serverToolName: mcp.serverToolName } : {}),
              }
            : {}),
          requiresApproval: tool.requiresApproval ?? false,
          description: tool.description,
        };
      }),
    );
    const listing: ToolListing = { tools: listed, skippedServers: tools.skippedServers };
    process.stdout.write(`${JSON.stringify(listing)}\n`);
    return 0;
  } finally {
    await tools.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigurationError) {
      console.error(error.message);
      process.exitCode = 2;
    } else {
      console.error(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    }
  },
);
