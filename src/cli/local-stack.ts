import type { Client } from '@temporalio/client';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { temporal as proto } from '@temporalio/proto';
import type { TemporalConnection, WorkerConfig } from '../config';
import { DevServer, isServerReachable } from './dev-server';
import { spawnTypescript } from './typescript-process';

/** Whether some worker polled the task queue for workflow tasks in the last `withinMs`. */
export async function hasLiveWorker(client: Client, namespace: string, taskQueue: string, withinMs = 60_000): Promise<boolean> {
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
export async function ensureLocalServer(temporal: TemporalConnection, worker: WorkerConfig, log: (line: string) => void): Promise<DevServer | undefined> {
  if (await isServerReachable(temporal.address)) return undefined;
  if (!temporal.isLocalDefault) {
    throw new Error(`Cannot reach Temporal at ${temporal.address}. Check TEMPORAL_ADDRESS (or your temporal.toml profile) and that the server is running.`);
  }
  const port = Number(temporal.address.split(':').pop());
  log(`No Temporal server at ${temporal.address}; starting the local dev server (data in ${worker.dataDirectory}) ...`);
  const server = await DevServer.start({ port, databaseFile: join(worker.dataDirectory, 'temporal.sqlite') });
  log(`Temporal dev server ready at ${server.address}${server.uiUrl ? `, Web UI ${server.uiUrl}` : ''}.`);
  return server;
}

/** A worker started by the CLI as a child process, stopped with SIGTERM (graceful) when the CLI is done. */
export class ChildWorker {
  private constructor(private readonly child: ChildProcess, readonly logFile: string) {}

  static async start(client: Client, temporal: TemporalConnection, worker: WorkerConfig, log: (line: string) => void, timeoutMs = 120_000): Promise<ChildWorker> {
    mkdirSync(worker.dataDirectory, { recursive: true });
    const logFile = join(worker.dataDirectory, 'worker.log');
    const output = openSync(logFile, 'a');
    const child = spawnTypescript('worker/main.ts', { stdio: ['ignore', output, output], env: process.env });
    closeSync(output);
    const started = new ChildWorker(child, logFile);
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    log(`Starting a worker on task queue "${worker.taskQueue}" (log: ${logFile}) ...`);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exited) {
        const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
        throw new Error(`The worker exited while starting. Last lines of ${logFile}:\n${tail}`);
      }
      if (await hasLiveWorker(client, temporal.namespace, worker.taskQueue, 10_000).catch(() => false)) return started;
      await delay(250);
    }
    await started.stop();
    throw new Error(`The worker did not start polling within ${timeoutMs / 1000} s; see ${logFile}.`);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 40_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
