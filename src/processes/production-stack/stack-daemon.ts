import { logSince, logSize } from '../log-tail';
import type { ReadinessProcess } from '../readiness';
import { isAlive, killDaemon, spawnDaemon, stopDaemon, type DaemonRecord } from './daemon';
import type { StackLog, StackProcessStatus } from './stack-component';
import type { StackFolder } from './stack-state';

/** A daemon just started: its pid, and how a wait for its readiness watches it. */
export interface SpawnedDaemon {
  pid: number;
  /** Its exit and its output since this start, for `waitUntilReady`. */
  readiness: ReadinessProcess;
  /** What it has written to its log since this start. */
  output(): string;
}

/**
 * The process of one component of the stack (`temporal-history`, `relay-machine-1`): a daemon
 * (daemon.ts) recorded under its name in the stack's state file and writing to `logs/<name>.log`,
 * so a later command finds it again.
 */
export class StackDaemon {
  constructor(
    private readonly folder: StackFolder,
    readonly name: string,
  ) {}

  /** Its record while it runs. */
  get record(): DaemonRecord | undefined {
    return this.folder.running(this.name);
  }

  get running(): boolean {
    return this.record !== undefined;
  }

  get logFile(): string {
    return this.folder.logFile(this.name);
  }

  /** Starts `command` as this daemon and records it at once. */
  spawn(command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string }): SpawnedDaemon {
    const logFile = this.logFile;
    const logOffset = logSize(logFile);
    const daemon = spawnDaemon(command, args, { ...options, logFile });
    this.folder.record(this.name, daemon);
    return {
      pid: daemon.pid,
      readiness: { exitReason: () => (isAlive(daemon) ? undefined : 'exited'), logFile, logOffset },
      output: () => logSince(logFile, logOffset, Infinity),
    };
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it is gone. Its record stays (see {@link forget}). */
  async stop(graceMs: number): Promise<void> {
    await stopDaemon(this.folder.state.processes[this.name], graceMs);
  }

  /** Stops it when it runs ({@link stop}) and says so in the log; nothing when it does not. */
  async stopIfRunning(log: StackLog, graceMs: number): Promise<void> {
    if (!this.running) return;
    await this.stop(graceMs);
    log(`stopped ${this.name}`);
  }

  /**
   * Its row in `stack status`: its pid while it runs, and then `health()` (`ready`, or what does not
   * answer), else `stopped`; with where it is.
   */
  async statusRow(
    health: () => Promise<string>,
    where: Pick<StackProcessStatus, 'address' | 'machine'>,
  ): Promise<StackProcessStatus> {
    const record = this.record;
    return {
      name: this.name,
      ...(record ? { pid: record.pid } : {}),
      running: record !== undefined,
      health: record ? await health() : 'stopped',
      ...where,
    };
  }

  /** SIGKILL, as a crash would; resolves when it is gone. */
  async kill(): Promise<void> {
    await killDaemon(this.folder.state.processes[this.name]);
  }

  /** Drops its record from the state file. */
  forget(): void {
    this.folder.record(this.name, undefined);
  }
}
