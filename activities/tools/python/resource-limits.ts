import { readFileSync, readdirSync } from 'node:fs';

/** Kernel resource limits (setrlimit) every process of a call runs under. */
export interface ResourceLimits {
  /** RLIMIT_AS: address space per process, in bytes. */
  memoryBytes: number;
  /** RLIMIT_CPU: CPU seconds per process; SIGXCPU at this many seconds, SIGKILL one second later. */
  cpuSeconds: number;
  /** RLIMIT_NPROC: processes and threads of the sandbox's user. */
  maxProcesses: number;
  /** RLIMIT_FSIZE: largest file a process may write, in bytes. */
  maxFileBytes: number;
  /** RLIMIT_NOFILE: open file descriptors per process. */
  maxOpenFiles: number;
}

/** Files and directories a write quota allows: one per 4 KiB (a tmpfs inode is kernel memory that its `size=` does not count), at least 1024. */
export function writeQuotaEntries(writeQuotaBytes: number): number {
  return Math.max(1024, Math.floor(writeQuotaBytes / 4096));
}

/** `prlimit` (util-linux) options that set `limits`, soft and hard, plus no core dumps. */
export function prlimitArguments(limits: ResourceLimits): string[] {
  const cpu = Math.max(1, Math.ceil(limits.cpuSeconds));
  return [
    `--as=${Math.floor(limits.memoryBytes)}`,
    `--cpu=${cpu}:${cpu + 1}`,
    `--nproc=${Math.floor(limits.maxProcesses)}`,
    `--fsize=${Math.floor(limits.maxFileBytes)}`,
    `--nofile=${Math.floor(limits.maxOpenFiles)}`,
    '--core=0',
  ];
}

/**
 * Processes and threads that run under real user id `uid` right now (what RLIMIT_NPROC counts
 * when no user namespace separates a call from the worker's other processes).
 */
export function countTasksOfUser(uid: number): number {
  let tasks = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      const threads = /^Threads:\s+(\d+)/m.exec(status)?.[1];
      if (realUid !== undefined && Number(realUid) === uid) tasks += Number(threads ?? 1);
    } catch {
      // the process ended while we looked
    }
  }
  return tasks;
}
