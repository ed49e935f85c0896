import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ProductionStack, type WorkerRole } from '../../../src/processes/production-stack/production-stack';
import { STACK_TOPOLOGY } from '../../../src/config/stack-topology';
import type { ResearchBatchInput } from '../../../src/core/batch-contract';
import type { BatchItem } from '../../../src/domain/batch-input';
import type { ResearchRunInput } from '../../../src/core/run-input';
import type { ResearchRunResult } from '../../../src/core/run-result';
import { WorkflowTypes } from '../../../src/core/workflow-types';
import { storeBatchInput } from '../../../src/storage/batch-input-file';
import { loadConversation } from '../../../src/storage/conversation';
import { createS3Client, S3TranscriptStore } from '../../../src/storage/s3-transcript-store';
import type { ChatMessage } from '../../../src/core/messages';
import { ScriptedModelServer, type Script } from '../../fakes/scripted-model-server';
import { cachedWorkflowBundle } from '../../integration/support/workflow-bundle';
import { S3Objects } from '../../integration/support/s3-objects';
import type { ResultLine } from '../../integration/support/batch-helpers';

const root = resolve(__dirname, '../../..');

/** What a test of the cluster tier sees: the stack (every process real), the scripted model, a client. */
export class ClusterEnvironment {
  private constructor(
    readonly directory: string,
    readonly stack: ProductionStack,
    readonly model: ScriptedModelServer,
    readonly client: Client,
    private readonly connection: Connection,
    readonly store: S3TranscriptStore,
    readonly objects: S3Objects,
    readonly toolLog: string,
  ) {}

  /**
   * A new stack in a temporary folder on free loopback ports, with `workers` per role (on
   * `options.machines` worker machines when given). Whatever happens later, every process of it
   * is SIGKILLed and its machines deleted when this process exits (the exit hook), so a failed or
   * interrupted test leaves nothing running.
   */
  static async start(
    script: Script,
    workers: Partial<Record<WorkerRole, number>>,
    log: (line: string) => void,
    options: { machines?: number } = {},
  ): Promise<ClusterEnvironment> {
    const directory = mkdtempSync(join(tmpdir(), 'react-agent-cluster-'));
    const model = await ScriptedModelServer.start({ script });
    let stack: ProductionStack | undefined;
    const onExit = () => stack?.killAllNow();
    process.once('exit', onExit);
    try {
      const bundle = await cachedWorkflowBundle();
      stack = await ProductionStack.open(join(directory, 'stack'), { freePorts: true });
      const toolLog = join(directory, 'tools.log');
      await stack.up({
        workers,
        ...(options.machines !== undefined ? { machines: options.machines } : {}),
        log,
        workerEnvironment: {
          OPENAI_BASE_URL: model.baseUrl,
          OPENAI_API_KEY: 'sk-cluster-test-0123456789',
          REACT_AGENT_MODEL: 'scripted-model',
          REACT_AGENT_TOOL_MODULES: join(root, 'test/fakes/test-tools.ts'),
          REACT_AGENT_TOOLS: 'none',
          REACT_AGENT_WORKFLOW_BUNDLE: bundle,
          REACT_AGENT_TEST_TOOL_LOG: toolLog,
          REACT_AGENT_MODEL_HEARTBEAT_SECONDS: '5',
          // Retries have to outlast a PostgreSQL or history outage (an activity whose completion
          // could not be recorded times out and runs again).
          REACT_AGENT_MODEL_MAX_ATTEMPTS: '30',
          REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
        },
      });
      const connection = await Connection.connect({ address: stack.address });
      const client = new Client({ connection, namespace: stack.namespace });
      const s3 = stack.s3Environment();
      const s3Client = createS3Client(
        {
          bucket: STACK_TOPOLOGY.s3.bucket,
          prefix: STACK_TOPOLOGY.s3.transcriptPrefix,
          endpoint: s3.AWS_ENDPOINT_URL as string,
          region: STACK_TOPOLOGY.s3.region,
          forcePathStyle: true,
        },
        {
          credentials: {
            accessKeyId: s3.AWS_ACCESS_KEY_ID as string,
            secretAccessKey: s3.AWS_SECRET_ACCESS_KEY as string,
          },
        },
      );
      const store = new S3TranscriptStore(
        { bucket: STACK_TOPOLOGY.s3.bucket, prefix: STACK_TOPOLOGY.s3.transcriptPrefix },
        s3Client,
      );
      return new ClusterEnvironment(
        directory,
        stack,
        model,
        client,
        connection,
        store,
        new S3Objects(s3Client, STACK_TOPOLOGY.s3.bucket),
        toolLog,
      );
    } catch (error) {
      stack?.killAllNow();
      await model.close();
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }

  get taskQueue(): string {
    return STACK_TOPOLOGY.workers.environment.REACT_AGENT_TASK_QUEUE as string;
  }

  startRun(input: ResearchRunInput, workflowId: string): Promise<WorkflowHandle> {
    return this.client.workflow.start(WorkflowTypes.researchAgent, {
      taskQueue: this.taskQueue,
      workflowId,
      args: [input],
    });
  }

  /** Stores the questions in the stack's S3 store and starts a `researchBatch` writing to `s3://<bucket>/batches/<id>`. */
  async startBatch(
    id: string,
    items: BatchItem[],
    options: Partial<ResearchBatchInput> = {},
  ): Promise<{ handle: WorkflowHandle; prefix: string }> {
    const input = await storeBatchInput(this.store, items);
    const prefix = `batches/${id}`;
    const handle = await this.client.workflow.start(WorkflowTypes.researchBatch, {
      taskQueue: this.taskQueue,
      workflowId: id,
      args: [
        {
          input,
          questions: items.length,
          rollouts: 1,
          output: `s3://${STACK_TOPOLOGY.s3.bucket}/${prefix}`,
          ...options,
        },
      ],
    });
    return { handle, prefix };
  }

  async iterLines(prefix: string, rollout: number): Promise<ResultLine[]> {
    return (await this.objects.text(`${prefix}/iter${rollout}.jsonl`))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as ResultLine);
  }

  /**
   * Waits for a workflow to close, asking with a deadline each time (while history or PostgreSQL
   * is down, a call hangs or fails: both are retried here), and returns its result.
   */
  async resultOf<T>(handle: WorkflowHandle, timeoutMs: number): Promise<{ result: T; closedAt: number }> {
    const deadline = Date.now() + timeoutMs;
    let lastProblem = 'not closed yet';
    while (Date.now() < deadline) {
      try {
        const description = await this.connection.withDeadline(Date.now() + 5_000, () => handle.describe());
        if (description.status.name === 'COMPLETED') {
          const closedAt = description.closeTime?.getTime() ?? Date.now();
          const result = (await this.connection.withDeadline(Date.now() + 10_000, () => handle.result())) as T;
          return { result, closedAt };
        }
        if (description.status.name !== 'RUNNING')
          throw new Error(`${handle.workflowId} ended ${description.status.name}`);
        lastProblem = 'running';
      } catch (error) {
        if (/ended (FAILED|TERMINATED|CANCELLED|TIMED_OUT|CONTINUED_AS_NEW)/.test((error as Error).message))
          throw error;
        lastProblem = (error as Error).message;
      }
      await delay(1_000);
    }
    throw new Error(`${handle.workflowId} did not complete within ${timeoutMs / 1000} s (last: ${lastProblem})`);
  }

  async transcript(result: ResearchRunResult): Promise<ChatMessage[]> {
    return loadConversation(this.store, result.transcript);
  }

  /** Resolves with the milliseconds it took until Temporal serves end to end again (start + terminate a workflow, describe a queue). */
  async timeUntilServing(timeoutMs = 180_000): Promise<number> {
    const started = Date.now();
    let problem: string | undefined = 'not asked yet';
    while (Date.now() - started < timeoutMs) {
      problem = await this.stack.servingProblem().catch((error: unknown) => (error as Error).message);
      if (problem === undefined) return Date.now() - started;
      await delay(250);
    }
    throw new Error(`Temporal did not serve again within ${timeoutMs / 1000} s: ${problem}`);
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
    try {
      await this.stack.down();
    } finally {
      this.stack.killAllNow();
      await this.model.close();
      rmSync(this.directory, { recursive: true, force: true });
    }
  }
}
