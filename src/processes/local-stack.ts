import type { Client } from '@temporalio/client';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { temporal as proto } from '@temporalio/proto';
import type { TemporalConnection, WorkerConfig } from '../config';
import { DevServer, isServerReachable } from './dev-server';
import { logSize } from './log-tail';
import { OwnedProcess } from './owned-process';
import { NotReadyError, waitUntilReady } from './readiness';
import { PROJECT_ROOT, projectEntryArguments } from './typescript-process';
import { workerProcessEnvironment } from './worker-process-environment';

/** Whether some worker polled the task queue for workflow tasks in the last `withinMs`. */
export async function hasLiveWorker(
  client: Client,
  namespace: string,
  taskQueue: string,
  withinMs = 60_000,
): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const now = Date.now();
  return (response.pollers ?? []).some((poller) => {
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    return now - seconds * 1000 < withinMs;
  });
}

/** Starts the local dev server when the configured address is the local default and nothing answers there. */
export async function ensureLocalServer(
  temporal: TemporalConnection,
  worker: WorkerConfig,
  log: (line: string) => void,
): Promise<DevServer | undefined> {
  if (await isServerReachable(temporal.address)) return undefined;
  if (!temporal.isLocalDefault) {
    throw new Error(
      `Cannot reach Temporal at ${temporal.address}. Check TEMPORAL_ADDRESS (or your temporal.toml profile) and that the server is running.`,
    );
  }
  const port = Number(temporal.address.split(':').pop());
  log(`No Temporal server at ${temporal.address}; starting the local dev server (data in ${worker.dataDirectory}) ...`);
  const server = await DevServer.start({ port, databaseFile: join(worker.dataDirectory, 'temporal.sqlite') });
  log(`Temporal dev server ready at ${server.address}${server.uiUrl ? `, Web UI ${server.uiUrl}` : ''}.`);
  return server;
}

/**
 * A worker started by the CLI as a child process in its own process group (see
 * {@link OwnedProcess}): a terminal's Ctrl-C does not reach it, so the CLI can cancel the run
 * and let the worker finish the cancellation before stopping it with SIGTERM (graceful).
 */
export class ChildWorker {
  private constructor(
    private readonly owned: OwnedProcess,
    readonly logFile: string,
  ) {}

  /** Process id of the worker. */
  get pid(): number | undefined {
    return this.owned.pid;
  }

  /** True while the worker process has not exited. */
  get running(): boolean {
    return this.owned.running;
  }

  static async start(
    client: Client,
    temporal: TemporalConnection,
    worker: WorkerConfig,
    log: (line: string) => void,
    timeoutMs = 120_000,
  ): Promise<ChildWorker> {
    mkdirSync(worker.dataDirectory, { recursive: true });
    const logFile = join(worker.dataDirectory, 'worker.log');
    const logOffset = logSize(logFile);
    const output = openSync(logFile, 'a');
    let child: OwnedProcess;
    try {
      child = OwnedProcess.spawn(process.execPath, projectEntryArguments('worker/main.ts'), {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', output, output],
        env: workerProcessEnvironment(process.env),
      });
    } finally {
      closeSync(output);
    }
    const started = new ChildWorker(child, logFile);
    log(`Starting a worker on task queue "${worker.taskQueue}" (log: ${logFile}) ...`);
    try {
      await waitUntilReady({
        what: `The worker (task queue "${worker.taskQueue}")`,
        probe: async () =>
          (await hasLiveWorker(client, temporal.namespace, worker.taskQueue, 10_000).catch(() => false))
            ? undefined
            : 'no worker polls the task queue yet',
        timeoutMs,
        intervalMs: 250,
        process: child.readiness(logFile, logOffset),
        outputLines: 15,
      });
      return started;
    } catch (error) {
      if (error instanceof NotReadyError && error.reason.kind === 'timed-out') await started.stop();
      throw error;
    }
  }

  /** SIGTERM (the worker shuts down gracefully), then SIGKILL to its process group if it has not exited within `graceMs` (default 40 s). */
  async stop(graceMs = 40_000): Promise<void> {
    await this.owned.stop(graceMs);
  }
}

/** What `run` started for itself (a dev server, a worker), stopped in order when it is done. */
export class StartedStack {
  server: DevServer | undefined;
  worker: ChildWorker | undefined;

  constructor(private readonly log: (line: string) => void) {}

  /** Whether the dev server it started has exited on its own. */
  get serverExited(): boolean {
    return this.server !== undefined && !this.server.running;
  }

  /**
   * Stops the worker (SIGTERM: running activities get their grace time; `quickly`: 3 s), then
   * the dev server. Idempotent.
   */
  async stop(quickly = false): Promise<void> {
    const { worker, server } = this;
    this.worker = undefined;
    this.server = undefined;
    if (worker?.running) {
      this.log('Stopping the worker this command started ...');
      await (quickly ? worker.stop(3_000) : worker.stop());
    }
    if (server?.running) {
      this.log('Stopping the dev server this command started ...');
      await server.stop();
    }
  }
}
