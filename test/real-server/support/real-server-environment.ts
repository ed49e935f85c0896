import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConversation } from '../../../src/storage/conversation';
import { LocalDirectoryTranscriptStore } from '../../../src/storage/local-directory-transcript-store';
import { DevServer } from '../../../src/processes/dev-server';
import type { ChatMessage } from '../../../src/core/messages';
import type { ResearchRunInput } from '../../../src/core/run-input';
import type { ResearchRunResult } from '../../../src/core/run-result';
import type { researchAgent } from '../../../workflows/research-agent';
import { cachedWorkflowBundle } from '../../integration/support/workflow-bundle';
import { WorkerProcess } from '../../integration/support/worker-process';
import { LlamaServer, type LlamaServerOptions } from './llama-server';

const root = resolve(__dirname, '../../..');

export interface RealServerEnvironmentOptions {
  /** How to start llama-server (model, context size, grammar, flags). Default: tiny-chatml, 8192 tokens, no grammar. */
  llamaServer?: LlamaServerOptions;
  /** Extra worker environment, over the defaults below. Default none. */
  workerEnvironment?: Record<string, string>;
}

/** A finished run: its handle, result and stored transcript. */
export interface FinishedRun {
  handle: WorkflowHandle<typeof researchAgent>;
  result: ResearchRunResult;
  messages: ChatMessage[];
}

/**
 * What a real-server test needs, all real: a Temporal dev server on free ports, llama.cpp's
 * llama-server serving a tiny model, and worker processes from worker/main.ts pointed at it with
 * the test tools (test/fakes/test-tools.ts). The same as the integration tier's AgentEnvironment
 * with llama-server in place of the scripted model server. `close()` stops every process it started.
 */
export class RealServerEnvironment {
  readonly workers: WorkerProcess[] = [];
  private static counter = 0;

  private constructor(
    readonly directory: string,
    readonly server: DevServer,
    /** The model server; `llama.restart({ grammar })` changes it under running workers. */
    readonly llama: LlamaServer,
    readonly client: Client,
    private readonly connection: Connection,
    readonly taskQueue: string,
    readonly store: LocalDirectoryTranscriptStore,
    /** The test tools' log (see test/integration/support/tool-log.ts). */
    readonly toolLog: string,
    private readonly workerEnvironment: Record<string, string>,
  ) {}

  /** Starts the dev server and llama-server (no worker yet: call `startWorker`). */
  static async start(options: RealServerEnvironmentOptions = {}): Promise<RealServerEnvironment> {
    // llama-server first: a missing build fails at once, with the setup command.
    const llama = await LlamaServer.start(options.llamaServer);
    const directory = mkdtempSync(join(tmpdir(), 'react-agent-real-server-'));
    try {
      const [server, bundle] = await Promise.all([
        DevServer.start({ port: 0, uiPort: false, databaseFile: join(directory, 'temporal.sqlite') }),
        cachedWorkflowBundle(),
      ]);
      const connection = await Connection.connect({ address: server.address }).catch(async (error: unknown) => {
        await server.stop();
        throw error;
      });
      const client = new Client({ connection });
      const taskQueue = `real-server-${process.pid}-${++RealServerEnvironment.counter}`;
      const transcripts = join(directory, 'transcripts');
      const toolLog = join(directory, 'tools.log');
      const workerEnvironment: Record<string, string> = {
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: 'default',
        OPENAI_BASE_URL: llama.baseUrl,
        OPENAI_API_KEY: 'not-needed',
        REACT_AGENT_MODEL: llama.modelName,
        REACT_AGENT_TASK_QUEUE: taskQueue,
        REACT_AGENT_TRANSCRIPT_DIR: transcripts,
        REACT_AGENT_DATA_DIR: directory,
        REACT_AGENT_TOOL_MODULES: join(root, 'test/fakes/test-tools.ts'),
        REACT_AGENT_TOOLS: 'none',
        REACT_AGENT_WORKFLOW_BUNDLE: bundle,
        REACT_AGENT_TEST_TOOL_LOG: toolLog,
        REACT_AGENT_MODEL_MAX_ATTEMPTS: '4',
        REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
        ...(options.workerEnvironment ?? {}),
      };
      return new RealServerEnvironment(
        directory,
        server,
        llama,
        client,
        connection,
        taskQueue,
        new LocalDirectoryTranscriptStore(transcripts),
        toolLog,
        workerEnvironment,
      );
    } catch (error) {
      await llama.close();
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /** Environment a worker (or the CLI) of this environment runs with. */
  get environment(): Record<string, string> {
    return { ...this.workerEnvironment };
  }

  async startWorker(extra: Record<string, string> = {}): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start({ ...this.workerEnvironment, ...extra });
    this.workers.push(worker);
    return worker;
  }

  async startRun(
    input: ResearchRunInput,
    workflowId = `real-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`,
  ): Promise<WorkflowHandle<typeof researchAgent>> {
    return this.client.workflow.start<typeof researchAgent>('researchAgent', {
      taskQueue: this.taskQueue,
      workflowId,
      args: [input],
      staticSummary: input.question.slice(0, 100),
    });
  }

  /** Starts a run, waits for its result and loads its transcript. */
  async run(input: ResearchRunInput, workflowId?: string): Promise<FinishedRun> {
    const handle = await this.startRun(input, workflowId);
    const result = (await handle.result()) as ResearchRunResult;
    return { handle, result, messages: await this.transcript(result) };
  }

  async transcript(result: ResearchRunResult): Promise<ChatMessage[]> {
    return loadConversation(this.store, result.transcript);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.crash()));
    await this.connection.close().catch(() => undefined);
    await Promise.all([this.server.stop(), this.llama.close()]);
    rmSync(this.directory, { recursive: true, force: true });
  }
}
