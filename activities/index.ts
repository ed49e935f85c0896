import type { ModelActivitySettings } from '../src/core/activity-contracts';
import type { ModelPrices } from '../src/domain/model-prices';
import type { SecretRedactor } from '../src/domain/secret-redaction';
import { createBatchActivities } from './batch-activities';
import { createConversationActivities } from './conversation-activities';
import { createEvaluationActivities, type EvaluationActivityDependencies } from './evaluation-activities';
import { createCompressContext } from './compression-activity';
import { cachedContextWindows } from './context-window-cache';
import { createLearnContextWindow } from './context-window-activity';
import type { LiveTextChannels } from './live-text/live-text-server';
import { createCallModel, type ModelDefaults } from './model-activity';
import type { ChatModel } from './model/chat-model';
import type { ModelLimitGate } from './model-limits/shared-model-limits';
import { createTiktokenCounter, type TokenCounter } from './token-counter';
import { createToolActivity } from './tools/tool-activity';
import { withToolCallMetrics } from './tools/tool-call-metrics';
import { withToolCallSpan, type TraceContentOptions } from './tracing/agent-spans';
import type { ToolRegistry } from './tools/tool-registry';
import type { TranscriptStore } from '../src/storage/transcript-store';
import type { OutputLocation } from '../src/storage/output-location';
import { withTranscriptFailures } from './transcript-failures';

/** Everything the activities need, injected by the worker (or a test). */
export interface ActivityDependencies {
  /** The model the runs call (activities/model/chat-model.ts), also for the context window and, without `summary`, compression's summaries. */
  chatModel: ChatModel;
  /**
   * What writes compression's summaries (`REACT_AGENT_SUMMARY_MODEL_API`, `REACT_AGENT_SUMMARY_MODEL`,
   * src/config/summary-model-config.ts): its client, and its model (absent: each run's own).
   * Default: `chatModel` and each run's model.
   */
  summary?: { chatModel: ChatModel; model?: string };
  store: TranscriptStore;
  tools: ToolRegistry;
  modelDefaults: ModelDefaults;
  /** Prices per model (REACT_AGENT_MODEL_PRICES): the cost `callModel` returns with a priced model's usage. Default: none. */
  modelPrices?: ModelPrices;
  /** Prompt and completion text in model spans (REACT_AGENT_TRACE_CONTENT), truncated; default none. */
  traceContent?: TraceContentOptions;
  /** How the workflow schedules model calls. */
  modelActivity: ModelActivitySettings;
  /** Queue of the tool fleet (REACT_AGENT_TOOL_TASK_QUEUE); default the run's own. */
  toolTaskQueue?: string;
  /**
   * How long what the model server said of a model's context window is kept, in seconds
   * (REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS); 0 asks at every run's start. Default 300
   * (`CONTEXT_WINDOW_CACHE_MS`).
   */
  contextWindowCacheSeconds?: number;
  /** Default: tiktoken o200k_base, loaded once. */
  tokenCounter?: TokenCounter;
  /** Opens a batch's `--output` (a directory, or `s3://…` with the worker's S3 settings); default: S3 with the SDK's own settings. */
  openOutput?: (output: string) => OutputLocation;
  /**
   * Folders the local paths clients name (a batch's output, an evaluation's inputs, judge prompt
   * file and output) must lie in (`REACT_AGENT_DATA_ROOTS`, `loadDataRoots`). Default: not
   * confined — the worker always passes them; only tests and benchmarks leave them out.
   */
  dataRoots?: readonly string[];
  /** The worker's secrets (src/config/configured-secrets.ts), redacted from every model reply and tool output before it is stored; default: URL credentials only. */
  redactor?: SecretRedactor;
  /** The models' shared limits (`REACT_AGENT_MODEL_LIMITS`, issue 33), asked before each model call; default none. */
  modelLimits?: ModelLimitGate;
  /** The worker's live text server (issue 32): model calls push their text to watchers through it; default none. */
  liveText?: LiveTextChannels;
  /** The evaluation's judge client, endpoint and verdict store; without it the evaluation activities are not registered. */
  evaluation?: Omit<EvaluationActivityDependencies, 'store' | 'countTokens' | 'openLocation' | 'dataRoots'>;
}

/** The agent's own activities, by name. Tool activities are added under each tool's name. */
export function createAgentActivities(input: ActivityDependencies) {
  const tokenCounter = input.tokenCounter ?? createTiktokenCounter();
  // Store errors become typed Temporal failures: missing/corrupt blobs are not retried, a store that is down is.
  const dependencies = { ...input, store: withTranscriptFailures(input.store) };
  // One probe per worker and model (issue 34): startConversation and learnContextWindow share its answers.
  const learnContextWindow = createLearnContextWindow({
    chatModel: cachedContextWindows(
      dependencies.chatModel,
      dependencies.contextWindowCacheSeconds !== undefined
        ? { maxAgeMs: dependencies.contextWindowCacheSeconds * 1000 }
        : {},
    ),
    modelDefaults: dependencies.modelDefaults,
  });
  return {
    ...createConversationActivities({
      store: dependencies.store,
      tools: dependencies.tools,
      tokenCounter,
      modelActivity: dependencies.modelActivity,
      defaultModel: dependencies.modelDefaults.model,
      learnContextWindow,
      ...(dependencies.toolTaskQueue ? { toolTaskQueue: dependencies.toolTaskQueue } : {}),
    }),
    compressContext: createCompressContext({
      chatModel: dependencies.summary?.chatModel ?? dependencies.chatModel,
      ...(dependencies.summary?.model !== undefined ? { summaryModel: dependencies.summary.model } : {}),
      store: dependencies.store,
      tokenCounter,
    }),
    callModel: createCallModel({
      chatModel: dependencies.chatModel,
      store: dependencies.store,
      tokenCounter,
      modelDefaults: dependencies.modelDefaults,
      tools: dependencies.tools,
      ...(dependencies.modelPrices ? { prices: dependencies.modelPrices } : {}),
      ...(dependencies.traceContent ? { traceContent: dependencies.traceContent } : {}),
      ...(dependencies.redactor ? { redactor: dependencies.redactor } : {}),
      ...(dependencies.modelLimits ? { modelLimits: dependencies.modelLimits } : {}),
      ...(dependencies.liveText ? { liveText: dependencies.liveText } : {}),
    }),
    learnContextWindow,
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;

/** All activities a worker registers: the agent's plus one per tool. */
export function createActivities(
  dependencies: ActivityDependencies,
): Record<string, (...args: never[]) => Promise<unknown>> {
  const tokenCounter = dependencies.tokenCounter ?? createTiktokenCounter();
  const activities: Record<string, (...args: never[]) => Promise<unknown>> = {
    ...createAgentActivities({ ...dependencies, tokenCounter }),
    ...createBatchActivities({
      store: dependencies.store,
      defaultModel: dependencies.modelDefaults.model,
      ...(dependencies.openOutput ? { openOutput: dependencies.openOutput } : {}),
      ...(dependencies.dataRoots ? { dataRoots: dependencies.dataRoots } : {}),
    }),
    ...(dependencies.evaluation
      ? createEvaluationActivities({
          ...dependencies.evaluation,
          store: withTranscriptFailures(dependencies.store),
          countTokens: (text) => tokenCounter.count(text),
          // Rollout files and outputs in s3:// are opened like a batch's output.
          ...(dependencies.openOutput ? { openLocation: dependencies.openOutput } : {}),
          ...(dependencies.dataRoots ? { dataRoots: dependencies.dataRoots } : {}),
        })
      : {}),
  };
  for (const name of dependencies.tools.names()) {
    const tool = dependencies.tools.get(name);
    // Each attempt counted and timed by tool and outcome (react_agent_tool_* metrics), and in an `execute_tool <name>` span.
    if (tool)
      activities[name] = withToolCallMetrics(
        name,
        withToolCallSpan(
          name,
          createToolActivity(tool, {
            store: withTranscriptFailures(dependencies.store),
            tokenCounter,
            ...(dependencies.redactor ? { redactor: dependencies.redactor } : {}),
          }),
        ),
      );
  }
  return activities;
}

export type { ModelDefaults } from './model-activity';
export { LocalDirectoryTranscriptStore } from '../src/storage/local-directory-transcript-store';
export { transcriptFailure, withTranscriptFailures } from './transcript-failures';
export type { TranscriptStore } from '../src/storage/transcript-store';
export { ToolRegistry } from './tools/tool-registry';
export { ToolInputError, type ToolDefinition, type ToolContext } from './tools/tool-definition';
