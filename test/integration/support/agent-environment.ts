import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConversation } from '../../../src/storage/conversation';
import { LocalDirectoryTranscriptStore } from '../../../src/storage/local-directory-transcript-store';
import { DevServer } from '../../../src/processes/dev-server';
import { SeaweedServer } from '../../../src/processes/seaweed-server';
import type { ChatMessage } from '../../../src/core/messages';
import type { ResearchRunInput } from '../../../src/core/run-input';
import type { ResearchRunResult } from '../../../src/core/run-result';
import type { researchAgent } from '../../../workflows/research-agent';
import { ScriptedModelServer, type Script } from '../../fakes/scripted-model-server';
import { TRACING_WORKFLOW_INTERCEPTOR_MODULES } from '../../../src/config/workflow-interceptors';
import { cachedWorkflowBundle } from './workflow-bundle';
import { WorkerProcess } from './worker-process';

const root = resolve(__dirname, '../../..');

export interface AgentEnvironmentOptions {
  script: Script;
  /** Extra worker environment (e.g. a short model heartbeat). */
  workerEnvironment?: Record<string, string>;
  /** Start the dev server with its Web UI on a free port (`server.uiUrl`); headless by default. */
  webUi?: boolean;
  /** Dynamic configuration of the dev server (e.g. Worker Versioning's drainage check intervals). */
  serverDynamicConfig?: Record<string, string | number | boolean>;
}

/**
 * Everything an integration test needs, all real: a Temporal dev server (SQLite file) on free
 * ports, the scripted OpenAI-compatible model server, and worker processes started from
 * worker/main.ts with the test tools. `close()` stops every process it started.
 */
export class AgentEnvironment {
  readonly workers: WorkerProcess[] = [];
  private s3Server: SeaweedServer | undefined;
  private static counter = 0;

  private constructor(
    readonly directory: string,
    readonly server: DevServer,
    readonly model: ScriptedModelServer,
    readonly client: Client,
    private readonly connection: Connection,
    readonly taskQueue: string,
    readonly store: LocalDirectoryTranscriptStore,
    readonly toolLog: string,
    private readonly workerEnvironment: Record<string, string>,
  ) {}

  static async start(options: AgentEnvironmentOptions): Promise<AgentEnvironment> {
    const directory = mkdtempSync(join(tmpdir(), 'react-agent-test-'));
    // When one part fails to start, the parts that did start are stopped before the error is
    // thrown: a model server left listening would keep jest from ever exiting.
    const [serverStart, modelStart, bundleStart] = await Promise.allSettled([
      DevServer.start({
        port: 0,
        uiPort: options.webUi ? 0 : false,
        databaseFile: join(directory, 'temporal.sqlite'),
        ...(options.serverDynamicConfig ? { dynamicConfig: options.serverDynamicConfig } : {}),
      }),
      ScriptedModelServer.start({ script: options.script }),
      cachedWorkflowBundle(),
    ]);
    const failure = [serverStart, modelStart, bundleStart].find((start) => start.status === 'rejected');
    let connection: Connection | undefined;
    try {
      if (failure !== undefined) throw failure.reason;
      connection = await Connection.connect({
        address: (serverStart as PromiseFulfilledResult<DevServer>).value.address,
      });
    } catch (error) {
      await Promise.all([
        serverStart.status === 'fulfilled' ? serverStart.value.stop() : undefined,
        modelStart.status === 'fulfilled' ? modelStart.value.close() : undefined,
      ]);
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
    const server = (serverStart as PromiseFulfilledResult<DevServer>).value;
    const model = (modelStart as PromiseFulfilledResult<ScriptedModelServer>).value;
    const bundle = (bundleStart as PromiseFulfilledResult<string>).value;
    const client = new Client({ connection });
    const taskQueue = `test-${process.pid}-${++AgentEnvironment.counter}`;
    const transcripts = join(directory, 'transcripts');
    const toolLog = join(directory, 'tools.log');
    const workerEnvironment: Record<string, string> = {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'sk-test-secret-key-0123456789',
      REACT_AGENT_MODEL: 'scripted-model',
      REACT_AGENT_TASK_QUEUE: taskQueue,
      REACT_AGENT_TRANSCRIPT_DIR: transcripts,
      REACT_AGENT_DATA_DIR: directory,
      REACT_AGENT_TOOL_MODULES: join(root, 'test/fakes/test-tools.ts'),
      // Only the test tools, unless a test turns the research tools on.
      REACT_AGENT_TOOLS: 'none',
      REACT_AGENT_WORKFLOW_BUNDLE: bundle,
      REACT_AGENT_TEST_TOOL_LOG: toolLog,
      REACT_AGENT_MODEL_HEARTBEAT_SECONDS: '5',
      REACT_AGENT_MODEL_STALL_SECONDS: '5',
      REACT_AGENT_MODEL_MAX_ATTEMPTS: '4',
      REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
      ...(options.workerEnvironment ?? {}),
    };
    return new AgentEnvironment(
      directory,
      server,
      model,
      client,
      connection,
      taskQueue,
      new LocalDirectoryTranscriptStore(transcripts),
      toolLog,
      workerEnvironment,
    );
  }

  /** Environment a worker (or the CLI) of this environment runs with. */
  get environment(): Record<string, string> {
    return { ...this.workerEnvironment };
  }

  async startWorker(extra: Record<string, string> = {}): Promise<WorkerProcess> {
    // As a worker given no bundle picks one (worker/main.ts): traced when it exports traces.
    const traces = Boolean(extra.OTEL_EXPORTER_OTLP_ENDPOINT || extra.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
    // The traced bundle is built (or taken from the cache) only for such a worker.
    const bundle: Record<string, string> =
      traces && !('REACT_AGENT_WORKFLOW_BUNDLE' in extra)
        ? { REACT_AGENT_WORKFLOW_BUNDLE: await cachedWorkflowBundle(undefined, TRACING_WORKFLOW_INTERCEPTOR_MODULES) }
        : {};
    const worker = await WorkerProcess.start({ ...this.workerEnvironment, ...extra, ...bundle });
    this.workers.push(worker);
    return worker;
  }

  /**
   * Starts an S3-compatible server (SeaweedFS) with these buckets, in this environment's folder,
   * stopped by {@link AgentEnvironment.close}. Its `environment()` (AWS_* and AWS_ENDPOINT_URL)
   * is what a worker or the CLI needs to reach it.
   */
  async startS3(buckets: string[]): Promise<SeaweedServer> {
    if (this.s3Server) throw new Error('this environment already has an S3 server');
    this.s3Server = await SeaweedServer.start({ directory: join(this.directory, 'seaweedfs'), buckets });
    return this.s3Server;
  }

  /** SIGKILL every worker this environment started (each test starts from none). */
  async crashAllWorkers(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.crash()));
  }

  async startRun(
    input: ResearchRunInput,
    workflowId = `run-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`,
  ): Promise<WorkflowHandle<typeof researchAgent>> {
    return this.client.workflow.start<typeof researchAgent>('researchAgent', {
      taskQueue: this.taskQueue,
      workflowId,
      args: [input],
      staticSummary: input.question.slice(0, 100),
    });
  }

  async transcript(result: ResearchRunResult): Promise<ChatMessage[]> {
    return loadConversation(this.store, result.transcript);
  }

  /** Model requests this run sent, in order. */
  requestsOf(workflowId: string) {
    return this.model.requests.filter((request) => request.workflowId === workflowId);
  }

  /**
   * Stops everything this environment started. The dev server and SeaweedFS are SIGKILLed, not
   * stopped gracefully (about 1.2 s and 2.2 s on 2 cores, per file): their data is thrown away
   * with the folder, and a graceful stop is dev-server.test.ts's subject, not every file's.
   */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.crash()));
    await this.connection.close().catch(() => undefined);
    await Promise.all([this.server.kill(), this.model.close(), this.s3Server?.kill()]);
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/** Checks the DeepResearch protocol on a stored transcript; returns the problems (empty when valid). */
export function protocolProblems(messages: ChatMessage[]): string[] {
  const problems: string[] = [];
  if (messages[0]?.role !== 'system') problems.push('first message is not the system prompt');
  if (messages[1]?.role !== 'user') problems.push('second message is not the question');
  for (let index = 2; index < messages.length; index += 1) {
    const message = messages[index] as ChatMessage;
    const expected = index % 2 === 0 ? 'assistant' : 'user';
    if (message.role !== expected) problems.push(`message ${index} is ${message.role}, expected ${expected}`);
    if (message.role === 'assistant') {
      if (message.content.includes('<tool_response>'))
        problems.push(`message ${index}: assistant wrote a <tool_response>`);
      const calls = message.content.split('<tool_call>').length - 1;
      const next = messages[index + 1];
      const responses = next ? next.content.split('<tool_response>').length - 1 : 0;
      if (calls > 0 && responses !== calls)
        problems.push(
          `message ${index} has ${calls} <tool_call>s but the next message has ${responses} <tool_response>s`,
        );
    }
  }
  return problems;
}
