import { mkdirSync } from 'node:fs';
import type { ToolDefinition } from '../activities';
import type { ChatModel } from '../activities/model/chat-model';
import { createParseFileTool } from '../activities/tools/parse-file/parse-file-tool';
import { createPythonTool } from '../activities/tools/python/python-tool';
import { KnowledgeBase } from '../src/knowledge-base/knowledge-base';
import { createLocalSearchBackend } from '../activities/tools/search/local-search-backend';
import type { SearchBackend } from '../src/domain/search-backend';
import { createSearchTool } from '../activities/tools/search/search-tool';
import { createSearxngSearchBackend } from '../activities/tools/search/searxng-search-backend';
import { createSerperSearchBackend } from '../activities/tools/search/serper-search-backend';
import { createModelPageSummarizer } from '../activities/tools/visit/page-summarizer';
import { createVisitTool } from '../activities/tools/visit/visit-tool';
import {
  loadDocumentConfig,
  loadEnabledTools,
  loadParseFileConfig,
  loadPythonConfig,
  loadSearchConfig,
  loadVisitConfig,
  type Environment,
} from '../src/config';

/** What the research tools need from the rest of the composition root. */
export interface ResearchToolsContext {
  environment: Environment;
  /** For visit's goal-directed summaries: the model, asked for only when they are on. */
  modelClient: () => { chatModel: ChatModel; model: string };
  log: (line: string) => void;
}

/**
 * Builds the research tools REACT_AGENT_TOOLS enables (default all), each from its own
 * configuration. A configuration problem (missing key, unavailable sandbox) throws here, so the
 * worker fails at start, naming the variable.
 */
export function createResearchTools(context: ResearchToolsContext): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const name of loadEnabledTools(context.environment)) {
    if (name === 'search') {
      const config = loadSearchConfig(context.environment);
      let backend: SearchBackend;
      if (config.backend === 'searxng') backend = createSearxngSearchBackend({ baseUrl: config.searxngUrl });
      else if (config.backend === 'serper') backend = createSerperSearchBackend({ apiKey: config.serperApiKey });
      else backend = createLocalSearchBackend(KnowledgeBase.open(config.knowledgeBasePath));
      tools.push(createSearchTool(backend, { resultsPerQuery: config.resultsPerQuery }));
      context.log(
        `search: ${config.backend}${config.backend === 'local' ? ` knowledge base ${config.knowledgeBasePath}` : ''}`,
      );
    } else if (name === 'visit') {
      const config = loadVisitConfig(context.environment);
      const { maxBytes: _fileBytes, ...documentLimits } = loadDocumentConfig(context.environment);
      tools.push(
        createVisitTool({
          documentLimits,
          maxBytes: config.maxBytes,
          timeoutMs: config.timeoutSeconds * 1000,
          allowPrivateNetworks: config.allowPrivateNetworks,
          allowedHosts: config.allowedHosts,
          localFileDirectories: config.localFileDirectories,
          ...(config.summarize ? { summarizer: createModelPageSummarizer(context.modelClient()) } : {}),
        }),
      );
    } else if (name === 'python') {
      const python = createPythonTool(loadPythonConfig(context.environment));
      tools.push(python);
      context.log(`python: ${python.isolationDescription}`);
    } else {
      const config = loadParseFileConfig(context.environment);
      for (const directory of config.workspaceDirectories) mkdirSync(directory, { recursive: true });
      const { maxBytes, ...documentLimits } = loadDocumentConfig(context.environment);
      tools.push(createParseFileTool({ workspaceDirectories: config.workspaceDirectories, maxBytes, documentLimits }));
      context.log(`parse_file: workspace ${config.workspaceDirectories.join(', ')}`);
    }
  }
  return tools;
}
