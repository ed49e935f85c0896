import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalDirectoryTranscriptStore } from '../../src/storage/local-directory-transcript-store';
import { DevServer } from '../../src/processes/dev-server';
import { ScriptedModelServer, type Script } from '../../test/fakes/scripted-model-server';
import { cachedWorkflowBundle } from '../../test/integration/support/workflow-bundle';
import { WorkerProcess } from '../../test/integration/support/worker-process';
import type { ModelRequestLogEntry } from './invariants';

const root = resolve(__dirname, '../..');

/** Open while the dev server answers; chaos steps that need the server wait on it. */
export class ServerGate {
  private isUp = true;
  private waiters: Array<() => void> = [];

  get up(): boolean {
    return this.isUp;
  }

  down(): void {
    this.isUp = false;
  }

  open(): void {
    this.isUp = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  wait(): Promise<void> {
    return this.isUp ? Promise.resolve() : new Promise((resolveWait) => this.waiters.push(resolveWait));
  }
}

/**
 * The processes of a chaos run, all real: a dev server on a SQLite file in a temp dir, the
 * scripted model server, and worker processes from worker/main.ts with the chaos tools.
 * `close()` stops everything and deletes the temp dir; it is safe to call at any point, twice.
 */
export class ChaosEnvironment {
  readonly directory: string;
  readonly toolLog: string;
  readonly transcripts: string;
  readonly taskQueue = `chaos-${process.pid}-${Date.now().toString(36)}`;
  readonly gate = new ServerGate();
  server?: DevServer;
  model?: ScriptedModelServer;
  client?: Client;
  store: LocalDirectoryTranscriptStore;
  private connection?: Connection;
  private workerEnvironment: Record<string, string> = {};
  private readonly liveWorkers = new Set<WorkerProcess>();
  private readonly completedAt = new Map<object, number>();
  private completionPoller?: NodeJS.Timeout;
  private closing?: Promise<void>;
  /** Last resort when the process exits without close() (a forced exit): runs after the child-killing exit hooks. */
  private readonly removeOnExit = () => {
    if (!this.keepDirectory) rmSync(this.directory, { recursive: true, force: true, maxRetries: 3 });
  };

  constructor(private readonly keepDirectory = false) {
    this.directory = mkdtempSync(join(tmpdir(), 'react-agent-chaos-'));
    this.toolLog = join(this.directory, 'tools.log');
    this.transcripts = join(this.directory, 'transcripts');
    this.store = new LocalDirectoryTranscriptStore(this.transcripts);
    process.on('exit', this.removeOnExit);
  }

  async start(script: Script, workerEnvironment: Record<string, string>): Promise<void> {
    const [serverStarted, modelStarted, bundleBuilt] = await Promise.allSettled([
      DevServer.start({ port: 0, uiPort: false, databaseFile: join(this.directory, 'temporal.sqlite') }),
      ScriptedModelServer.start({ script }),
      cachedWorkflowBundle(),
    ]);
    // Keep whatever started, so close() stops it even when another part failed.
    if (serverStarted.status === 'fulfilled') this.server = serverStarted.value;
    if (modelStarted.status === 'fulfilled') this.model = modelStarted.value;
    for (const outcome of [serverStarted, modelStarted, bundleBuilt])
      if (outcome.status === 'rejected') throw outcome.reason;
    const server = serverStarted.status === 'fulfilled' ? serverStarted.value : undefined;
    const model = modelStarted.status === 'fulfilled' ? modelStarted.value : undefined;
    const bundle = bundleBuilt.status === 'fulfilled' ? bundleBuilt.value : undefined;
    if (!server || !model || !bundle) throw new Error('the chaos environment did not start');
    this.connection = await Connection.connect({ address: server.address });
    this.client = new Client({ connection: this.connection, namespace: 'default' });
    this.workerEnvironment = {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'sk-chaos-not-a-secret',
      REACT_AGENT_MODEL: 'scripted-model',
      REACT_AGENT_TASK_QUEUE: this.taskQueue,
      REACT_AGENT_TRANSCRIPT_DIR: this.transcripts,
      REACT_AGENT_DATA_DIR: this.directory,
      REACT_AGENT_TOOL_MODULES: join(root, 'test/fakes/chaos-tools.ts'),
      REACT_AGENT_WORKFLOW_BUNDLE: bundle,
      REACT_AGENT_TEST_TOOL_LOG: this.toolLog,
      REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
      ...workerEnvironment,
    };
    // Completion times of model requests, for telling a reply lost in a crash from a repeated call.
    this.completionPoller = setInterval(() => {
      for (const record of model.requests) {
        if (record.completed && !this.completedAt.has(record)) this.completedAt.set(record, Date.now());
      }
    }, 50);
  }

  /** Starts a worker process and resolves once it polls. */
  async startWorker(): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start(this.workerEnvironment, 90_000);
    if (this.closing) {
      await worker.crash();
      throw new Error('the chaos environment closed while a worker was starting');
    }
    this.liveWorkers.add(worker);
    return worker;
  }

  /** SIGKILL a worker; resolves with the kill time once the process is gone. */
  async killWorker(worker: WorkerProcess): Promise<number> {
    const at = Date.now();
    this.liveWorkers.delete(worker);
    await worker.crash();
    return at;
  }

  get serverAddress(): string {
    if (!this.server) throw new Error('the chaos environment is not started');
    return this.server.address;
  }

  get temporal(): Client {
    if (!this.client) throw new Error('the chaos environment is not started');
    return this.client;
  }

  /** Every model request so far, in the checkers' shape (only 200 answers count as completed). */
  modelRequests(): Array<ModelRequestLogEntry & { aborted: boolean; status: number }> {
    return (this.model?.requests ?? []).map((record) => {
      const completedAt = this.completedAt.get(record);
      return {
        ...(record.workflowId !== undefined ? { workflowId: record.workflowId } : {}),
        ...(record.modelCall !== undefined ? { modelCall: record.modelCall } : {}),
        receivedAt: record.receivedAt,
        completed: record.completed && record.status === 200,
        ...(completedAt !== undefined ? { completedAt } : {}),
        aborted: record.aborted,
        status: record.status,
      };
    });
  }

  /**
   * Stops every process and deletes the temp dir. Pass `closeConnection: false` when client calls
   * may still be in flight (an abort): the Temporal client retries a failed call from a timer, and
   * a retry that fires after close() throws 'Channel has been shut down' as an uncaught exception.
   * An idle connection left open does not keep the process alive.
   */
  close(closeConnection = true): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.completionPoller);
      await Promise.all([...this.liveWorkers].map((worker) => worker.crash().catch(() => undefined)));
      this.liveWorkers.clear();
      if (closeConnection) await this.connection?.close().catch(() => undefined);
      await Promise.all([this.server?.stop().catch(() => undefined), this.model?.close().catch(() => undefined)]);
      if (!this.keepDirectory) rmSync(this.directory, { recursive: true, force: true, maxRetries: 3 });
      process.off('exit', this.removeOnExit);
    })();
    return this.closing;
  }
}
