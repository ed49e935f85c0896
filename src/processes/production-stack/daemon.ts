import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A process of the stack that outlives the command that started it (unlike {@link OwnedProcess},
 * which dies with its parent): `stack up` starts it, a later `stack status` or `stack down` finds
 * it again through this record in the stack's state file.
 */
export interface DaemonRecord {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): a reused pid has another. */
  startTicks: number;
  command: string;
}

/** Field 22 of /proc/<pid>/stat (start time), or undefined when there is no such process. */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (state === 'Z' || state === 'X') return undefined;
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** True while the process the record names runs (the same process, not a later one with its pid). */
export function isAlive(record: DaemonRecord | undefined): record is DaemonRecord {
  return record !== undefined && processStartTicks(record.pid) === record.startTicks;
}

export interface SpawnDaemonOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** stdout and stderr are appended here. */
  logFile: string;
}

/** Starts `command` in a session of its own, detached from this process (it keeps running after this one exits). */
export function spawnDaemon(command: string, args: readonly string[], options: SpawnDaemonOptions): DaemonRecord {
  const log = openSync(options.logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', log, log],
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${command}`);
    child.on('error', () => undefined);
    child.unref();
    const startTicks = processStartTicks(pid);
    if (startTicks === undefined) throw new Error(`${command} exited at once; see ${options.logFile}`);
    return { pid, startTicks, command: [command, ...args].join(' ') };
  } finally {
    closeSync(log);
  }
}

function signalGroup(record: DaemonRecord, signal: NodeJS.Signals): void {
  if (!isAlive(record)) return;
  try {
    process.kill(-record.pid, signal);
  } catch {
    try {
      process.kill(record.pid, signal);
    } catch {
      // gone
    }
  }
}

/** SIGKILL to the daemon's process group, as a crash would; resolves when it is gone. */
export async function killDaemon(record: DaemonRecord | undefined, timeoutMs = 10_000): Promise<void> {
  if (!isAlive(record)) return;
  signalGroup(record, 'SIGKILL');
  await waitUntilGone(record, timeoutMs);
}

/** SIGTERM to the daemon's process group, then SIGKILL after `graceMs`; resolves when it is gone. */
export async function stopDaemon(record: DaemonRecord | undefined, graceMs: number): Promise<void> {
  if (!isAlive(record)) return;
  signalGroup(record, 'SIGTERM');
  if (await waitUntilGone(record, graceMs)) return;
  await killDaemon(record);
}

async function waitUntilGone(record: DaemonRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(record)) {
    if (Date.now() > deadline) return false;
    await delay(100);
  }
  return true;
}
