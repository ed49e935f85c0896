/**
 * The composition root: configuration → real clients → activities → Worker. Run it with
 * `react-agent worker` or `npm run worker` (compiled at install: dist/worker/main.js). Stops gracefully on SIGINT/SIGTERM: polling stops, running activities get
 * REACT_AGENT_SHUTDOWN_GRACE_SECONDS to finish, then are cancelled and retried by another worker.
 */
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { withModelLimits } from '../activities/model-limits/limited-chat-model';
import { SharedModelLimits } from '../activities/model-limits/shared-model-limits';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, ToolRegistry } from '../activities';
import { LiveTextServer } from '../activities/live-text/live-text-server';
import type { ChatModel } from '../activities/model/chat-model';
import { createChatModel } from '../activities/model/chat-model-factory';
import { summaryModelOf } from '../activities/model/summary-chat-model';
import { createTiktokenCounter } from '../activities/token-counter';
import {
  ConfigurationError,
  loadDataRoots,
  loadJudgeConfig,
  loadLiveTextConfig,
  loadSummaryModelConfig,
  loadMetricsConfig,
  loadModelConfig,
  loadModelLimits,
  loadModelPrices,
  loadTemporalConnection,
  loadTracingConfig,
  loadTranscriptStoreConfig,
  loadS3ClientSettings,
  loadWorkerConfig,
  loadWorkerDeploymentConfig,
  loadWorkerFleetConfig,
  planWorkerQueues,
  type WorkerQueuePlan,
} from '../src/config';
import { configuredSecretRedactor } from '../src/config/configured-secrets';
import { s3UrlOf } from '../src/core/s3-url';
import { maskUrlCredentials } from '../src/domain/secret-redaction';
import { CachedTranscriptStore } from '../src/storage/cached-transcript-store';
import { describeTranscriptStore, openTranscriptStore } from '../src/storage/open-transcript-store';
import { openOutputLocation } from '../src/storage/output-location';
import { S3TranscriptStore } from '../src/storage/s3-transcript-store';
import { LocalDirectoryVerdictStore, OutputLocationVerdictStore } from '../src/storage/verdict-store';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { loadWorkflowBundlePath } from '../src/config/tool-modules-config';
import { workflowPreloadModules } from '../src/config/workflow-preload-modules';
import { PROJECT_SEARCH_ATTRIBUTES } from '../src/core/search-attributes';
import {
  chooseWorkflowCode,
  describeWorkflowCode,
  workflowBuildId,
  workflowInterceptorModules,
} from './workflow-bundle';
import { startWorkerTracing } from './tracing';
import { installMetricsRuntime } from './metrics-runtime';
import { describeToolNames } from './mcp-tools';
import { startWorkerTools } from './worker-tools';
import { ACTIVITY_TRACE_VARIABLE, startActivityTrace } from './activity-trace';
import { redactProcessOutput } from './redacted-output';
import { secretRedactionInterceptor } from './secret-redaction-interceptor';

async function checkSearchAttributes(options: ReturnType<typeof loadTemporalConnection>): Promise<void> {
  const connection = await Connection.connect(options.connectionOptions);
  try {
    const response = await connection.operatorService.listSearchAttributes({ namespace: options.namespace });
    const registered = new Set(Object.keys(response.customAttributes ?? {}));
    const missing = Object.keys(PROJECT_SEARCH_ATTRIBUTES).filter((name) => !registered.has(name));
    if (missing.length) {
      const commands = missing
        .map(
          (name) =>
            `temporal operator search-attribute create --namespace ${options.namespace} --name ${name} --type ${PROJECT_SEARCH_ATTRIBUTES[name as keyof typeof PROJECT_SEARCH_ATTRIBUTES]}`,
        )
        .join('\n  ');
      throw new ConfigurationError(
        'TEMPORAL_NAMESPACE',
        `The namespace "${options.namespace}" at ${options.address} lacks the search attributes ${missing.join(', ')} that runs record. Register them once:\n  ${commands}`,
      );
    }
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    console.warn(`Could not check search attributes (${(error as Error).message}); continuing.`);
  } finally {
    await connection.close();
  }
}

/** An S3 store must be reachable with these credentials before the worker takes work: a wrong key or a missing bucket stops it at start. */
async function checkTranscriptStore(store: TranscriptStore): Promise<void> {
  if (!(store instanceof S3TranscriptStore)) return;
  try {
    await store.checkAccess();
  } catch (error) {
    const variable = (error as { variable?: string }).variable;
    if (variable) throw new ConfigurationError(variable, (error as Error).message);
    throw error;
  }
}

/** The activities one Worker registers: bookkeeping with the workflows, `callModel` for the model queue, each tool for the tool queue. */
function activitiesFor(
  plan: WorkerQueuePlan,
  all: Record<string, (...args: never[]) => Promise<unknown>>,
  toolNames: string[],
) {
  const tools = new Set(toolNames);
  return Object.fromEntries(
    Object.entries(all).filter(([name]) =>
      name === 'callModel' ? plan.model : tools.has(name) ? plan.tools : plan.workflows,
    ),
  );
}

function describePlan(plan: WorkerQueuePlan): string {
  const kinds = [plan.workflows && 'workflows', plan.model && 'model calls', plan.tools && 'tools']
    .filter(Boolean)
    .join(', ');
  const rate = plan.maxActivitiesPerSecond === undefined ? '' : `, ${plan.maxActivitiesPerSecond}/s`;
  return `"${plan.taskQueue}" (${kinds}; ${plan.maxConcurrentActivities} activity slots${rate})`;
}

/** The workflow code's build id (`workflowBuildId`), or none when there is no bundle nor sources to take it from (the SDK's default then). */
function defaultBuildIdOrNone(): string | undefined {
  try {
    return workflowBuildId(loadWorkflowBundlePath());
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  // Every secret of the configuration (API keys, URL credentials; the MCP servers' ${VAR} values once
  // they are read) is taken out of what the worker prints and of what its activities record.
  let redactor = configuredSecretRedactor(process.env);
  redactProcessOutput(() => redactor);
  const workerConfig = loadWorkerConfig();
  const fleet = loadWorkerFleetConfig(process.env, workerConfig.taskQueue);
  const plans = planWorkerQueues(fleet, workerConfig.maxConcurrentActivities);
  // REACT_AGENT_DEPLOYMENT_NAME / REACT_AGENT_BUILD_ID: Worker Versioning (docs/deploys.md); unset, unversioned.
  const deployment = loadWorkerDeploymentConfig();
  const version = deployment && {
    deploymentName: deployment.deploymentName,
    buildId: deployment.buildId ?? workflowBuildId(loadWorkflowBundlePath()),
  };
  // Unversioned, the build id only names the code in every task's history event (the Web UI's
  // "build"): the same 16 hex digits a versioned worker would take, where the SDK's default is
  // `@temporalio/worker@<version>+<64 hex>`, 74 bytes more in each of a step's six such events (issue 34).
  const unversionedBuildId = version ? undefined : defaultBuildIdOrNone();
  const modelConfig = loadModelConfig();
  const modelPrices = loadModelPrices();
  // REACT_AGENT_MODEL_LIMITS: each limited model's tokens/requests per minute, one budget for the namespace (docs/model-limits.md).
  const modelLimits = loadModelLimits();
  const judgeConfig = loadJudgeConfig();
  const summaryConfig = loadSummaryModelConfig();
  const temporal = loadTemporalConnection();
  // Before any NativeConnection or Worker: the SDK runtime with its Prometheus exporter (REACT_AGENT_METRICS_ADDRESS).
  installMetricsRuntime(loadMetricsConfig(), (line) => console.log(line));
  // OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT: the OpenTelemetry SDK and the Temporal interceptors' activity half and sink; unset, nothing.
  const tracingConfig = loadTracingConfig();
  const tracing = startWorkerTracing(tracingConfig, (line) => console.log(line));
  // Without an endpoint the workflows run without the OpenTelemetry interceptors, only the promise turns they add (issue 34).
  const traced = Boolean(tracingConfig.tracesUrl);
  // The bundle built at install (refused when older than workflows/ and src/core), unless REACT_AGENT_WORKFLOW_BUNDLE names one.
  const workflowCode = plans.some((plan) => plan.workflows)
    ? chooseWorkflowCode(loadWorkflowBundlePath(), (line) => console.log(line), { traced })
    : undefined;
  const bundledAtStart = workflowCode !== undefined && 'workflowsPath' in workflowCode;
  // REACT_AGENT_MODEL_MAX_REPLY_BYTES / _MAX_LINE_BYTES: a larger reply fails its call, not retried (the judge's too).
  const replyLimits = { maxReplyBytes: modelConfig.maxReplyBytes, maxLineBytes: modelConfig.maxLineBytes };
  // REACT_AGENT_MODEL_API: Chat Completions, OpenAI's Responses API or Anthropic's Messages API, each on its SDK.
  const chatModel = createChatModel({
    api: modelConfig.api,
    baseUrl: modelConfig.baseUrl,
    apiKey: modelConfig.apiKey,
    timeoutSeconds: modelConfig.timeoutSeconds,
    replyLimits,
    ...(modelConfig.thinkingBudgetTokens !== undefined
      ? { thinkingBudgetTokens: modelConfig.thinkingBudgetTokens }
      : {}),
    ...(modelConfig.reasoningEffort !== undefined ? { reasoningEffort: modelConfig.reasoningEffort } : {}),
  });
  // REACT_AGENT_SUMMARY_MODEL_API / _MODEL: what writes compression's summaries and visit's page summaries; by default the run model.
  const summary = summaryModelOf(summaryConfig, chatModel, modelConfig.model, {
    timeoutSeconds: modelConfig.timeoutSeconds,
    replyLimits,
  });
  const tokenCounter = createTiktokenCounter();
  // The limiter workflows run on the workflows' queue; each call reaches its limiter through the activity's client.
  const modelLimitGate = Object.keys(modelLimits).length
    ? new SharedModelLimits(modelLimits, fleet.taskQueue, () => Context.current().client)
    : undefined;
  // The summaries' and the judge's calls book the same limits as the model activity's own (which books them itself).
  const limited = (model: ChatModel): ChatModel =>
    modelLimitGate ? withModelLimits(model, modelLimitGate, tokenCounter) : model;
  const summaryChatModel = limited(summary.chatModel);
  // Built-ins, tool modules and the MCP servers' tools (REACT_AGENT_MCP_CONFIG), the servers started and supervised for
  // the worker's life; a model-only worker needs no MCP tools. `react-agent tools` lists what this builds.
  const mcp = await startWorkerTools({
    environment: process.env,
    log: (line) => console.log(`  ${line}`),
    modelClient: () => ({ chatModel: summaryChatModel, model: summary.visitModel }),
    mcp: plans.some((plan) => plan.workflows || plan.tools),
  });
  redactor = redactor.with(mcp.secrets);
  const toolGroups = mcp.groups;
  const tools = new ToolRegistry(mcp.tools);

  const storeConfig = loadTranscriptStoreConfig(process.env, workerConfig.transcriptDirectory);
  const storeBehindCache = openTranscriptStore(storeConfig);
  await checkTranscriptStore(storeBehindCache);
  const store: TranscriptStore =
    workerConfig.transcriptCacheMegabytes > 0
      ? new CachedTranscriptStore(storeBehindCache, {
          maxCharacters: Math.floor((workerConfig.transcriptCacheMegabytes * 1024 * 1024) / 2),
        })
      : storeBehindCache;
  await checkSearchAttributes(temporal);
  const s3Settings = loadS3ClientSettings(process.env);
  const dataRoots = loadDataRoots();
  // REACT_AGENT_LIVE_TEXT_LISTEN / _URL (issue 32): model calls push their text to watchers through this
  // worker's small HTTP server; `off`, watchers read the heartbeat details' tail.
  const liveTextConfig = loadLiveTextConfig();
  const liveText =
    liveTextConfig.listen && plans.some((plan) => plan.model)
      ? await LiveTextServer.start({
          ...liveTextConfig.listen,
          ...(liveTextConfig.advertisedUrl ? { advertisedUrl: liveTextConfig.advertisedUrl } : {}),
          ...(liveTextConfig.advertisedHost ? { advertisedHost: liveTextConfig.advertisedHost } : {}),
          maxWatchersPerCall: liveTextConfig.maxWatchersPerCall,
          maxWatchersPerRun: liveTextConfig.maxWatchersPerRun,
          maxWatchers: liveTextConfig.maxWatchers,
          flushMs: liveTextConfig.flushMs,
        })
      : undefined;
  const activities = createActivities({
    ...(liveText ? { liveText } : {}),
    chatModel,
    summary: { chatModel: summaryChatModel, ...(summary.model !== undefined ? { model: summary.model } : {}) },
    tokenCounter,
    store,
    tools,
    // A batch's --output: a directory, or s3://bucket/prefix with this worker's endpoint and region.
    openOutput: (output) => openOutputLocation(output, s3Settings),
    // REACT_AGENT_DATA_ROOTS: the only folders a client's batch output and evaluation paths may name.
    dataRoots,
    modelDefaults: {
      model: modelConfig.model,
      temperature: modelConfig.temperature,
      topP: modelConfig.topP,
      maxOutputTokens: modelConfig.maxOutputTokens,
      firstTokenSeconds: modelConfig.firstTokenSeconds,
      stallSeconds: modelConfig.stallSeconds,
      maxToolCallsPerReply: modelConfig.maxToolCallsPerReply,
    },
    // REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: the model server's window asked once per model, kept this long.
    contextWindowCacheSeconds: modelConfig.contextWindowCacheSeconds,
    // REACT_AGENT_MODEL_PRICES: each call of a priced model returns its cost with its usage.
    modelPrices,
    redactor,
    ...(modelLimitGate ? { modelLimits: modelLimitGate } : {}),
    // REACT_AGENT_TRACE_CONTENT: prompts and completions (truncated) in model spans.
    ...(tracing.traceContent ? { traceContent: tracing.traceContent } : {}),
    // Recorded by startConversation in the run's history: the run schedules its model and tool calls on these queues.
    modelActivity: {
      startToCloseSeconds: modelConfig.timeoutSeconds,
      heartbeatSeconds: modelConfig.heartbeatSeconds,
      maxAttempts: modelConfig.maxAttempts,
      ...(fleet.modelTaskQueue !== fleet.taskQueue ? { taskQueue: fleet.modelTaskQueue } : {}),
    },
    ...(fleet.toolTaskQueue !== fleet.taskQueue ? { toolTaskQueue: fleet.toolTaskQueue } : {}),
    // The evaluation's judge (issue 12): its own endpoint and model, defaulting to the run model's; verdicts kept by key.
    evaluation: {
      judgeModel: limited(
        createChatModel(
          {
            api: judgeConfig.api,
            baseUrl: judgeConfig.baseUrl,
            apiKey: judgeConfig.apiKey,
            timeoutSeconds: judgeConfig.timeoutSeconds,
            replyLimits,
          },
          'judge',
        ),
      ),
      endpoint: { model: judgeConfig.model, baseUrl: judgeConfig.baseUrl },
      // Shared by every worker when the transcripts are in S3; else this worker's data directory.
      verdicts:
        storeConfig.kind === 's3'
          ? new OutputLocationVerdictStore(
              openOutputLocation(s3UrlOf(storeConfig.bucket, storeConfig.prefix, 'verdicts'), s3Settings),
            )
          : new LocalDirectoryVerdictStore(join(workerConfig.dataDirectory, 'verdicts')),
    },
  });

  // REACT_AGENT_ACTIVITY_TRACE_FILE: a line per activity start and end, and per event-loop stall (worker/activity-trace.ts).
  const activityTrace = startActivityTrace(process.env[ACTIVITY_TRACE_VARIABLE]);
  // REACT_AGENT_WORKFLOW_V8_FLAGS: set before Worker.create starts the SDK's workflow thread, whose new isolate takes them (issue 34).
  for (const flag of workerConfig.workflowV8Flags) setFlagsFromString(flag);
  const connection = await NativeConnection.connect(temporal.connectionOptions);
  const workers = await Promise.all(
    plans.map((plan) =>
      Worker.create({
        connection,
        namespace: temporal.namespace,
        taskQueue: plan.taskQueue,
        ...(plan.workflows ? workflowCode : {}),
        activities: activitiesFor(plan, activities, tools.names()),
        maxConcurrentActivityTaskExecutions: plan.maxConcurrentActivities,
        ...(plan.maxActivitiesPerSecond === undefined
          ? {}
          : { maxTaskQueueActivitiesPerSecond: plan.maxActivitiesPerSecond }),
        maxConcurrentWorkflowTaskExecutions: workerConfig.maxConcurrentWorkflowTasks,
        shutdownGraceTime: `${workerConfig.shutdownGraceSeconds} seconds`,
        stickyQueueScheduleToStartTimeout: `${workerConfig.stickyQueueTimeoutSeconds} seconds`,
        maxHeartbeatThrottleInterval: `${workerConfig.heartbeatThrottleSeconds} seconds`,
        // Versioned: this Worker takes only the tasks of runs of its own version. Each workflow type
        // states its behaviour (workflows/versioning-behaviors.ts); PINNED for any that does not.
        ...(unversionedBuildId ? { buildId: unversionedBuildId } : {}),
        ...(version
          ? {
              workerDeploymentOptions: {
                useWorkerVersioning: true,
                version,
                defaultVersioningBehavior: 'PINNED' as const,
              },
            }
          : {}),
        // The workflow interceptors are in the prebuilt bundle; bundled here at start, they are added (traced or not).
        interceptors: {
          // Last, so the ones before it see the redacted failure too.
          activity: [...tracing.activityInterceptors, ...activityTrace, secretRedactionInterceptor(() => redactor)],
          ...(bundledAtStart ? { workflowModules: [...workflowInterceptorModules(traced)] } : {}),
        },
        // Bundled here at start, src/core is loaded once per workflow thread, as in the prebuilt bundle (issue 34).
        ...(bundledAtStart ? { bundlerOptions: { preloadModules: workflowPreloadModules() } } : {}),
        sinks: tracing.sinks,
      }),
    ),
  );
  console.log(
    `react-agent worker: role ${fleet.role}, task queue${plans.length > 1 ? 's' : ''} ${plans.map(describePlan).join(', ')} on ${temporal.address} (namespace ${temporal.namespace}); ` +
      `model ${modelConfig.model} at ${maskUrlCredentials(modelConfig.baseUrl)}${Object.keys(modelLimits).length ? ` (shared limits for ${Object.keys(modelLimits).join(', ')})` : ''}; tools: ${describeToolNames(toolGroups) || 'none'}; transcripts ${describeTranscriptStore(storeBehindCache)}; client paths in ${dataRoots.join(', ')}; ` +
      `live text ${liveText ? `at ${liveText.url}` : 'off'}; ` +
      `workflows ${describeWorkflowCode(workflowCode, traced)}; ` +
      `${workflowCode ? `workflow thread V8 flags ${workerConfig.workflowV8Flags.join(' ') || 'none'}; ` : ''}` +
      `${version ? `deployment ${version.deploymentName}, build ${version.buildId}` : `unversioned${unversionedBuildId ? `, build ${unversionedBuildId}` : ''}`}; pid ${process.pid}`,
  );
  try {
    // Each Worker stops on SIGINT/SIGTERM; if one fails, the others are shut down too.
    await Promise.all(
      workers.map((worker) =>
        worker.run().catch((error: unknown) => {
          for (const other of workers) if (other !== worker && other.getState() === 'RUNNING') other.shutdown();
          throw error;
        }),
      ),
    );
  } finally {
    await liveText?.close();
    await connection.close();
    await mcp.close();
    await tracing.shutdown();
  }
}

main().catch((error: unknown) => {
  console.error(
    error instanceof ConfigurationError ? error.message : configuredSecretRedactor(process.env).redactError(error),
  );
  process.exit(1);
});
