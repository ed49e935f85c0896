import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import type { ReadinessProcess } from './readiness';

/** How a child process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** How a process ended, as an error says it: `exited with code 1`, `was killed by SIGKILL`, `could not be started (…)`. */
export function describeExit(info: ExitInfo): string {
  if (info.error !== undefined) return `could not be started (${info.error.message})`;
  if (info.signal !== null) return `was killed by ${info.signal}`;
  return `exited with code ${info.code}`;
}

export interface OwnedProcessOptions {
  /** Working directory. Default: this process's. */
  cwd?: string;
  /** Environment. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Standard streams, as for `child_process.spawn`. Default `'ignore'` for all three. */
  stdio?: StdioOptions;
}

/** Whether children get their own process group (and a watchdog); POSIX only. */
const OWN_GROUPS = process.platform !== 'win32';

const liveProcesses = new Set<OwnedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: SIGKILL is all there is time for.
  process.on('exit', () => {
    for (const owned of liveProcesses) owned.killNow();
  });
}

/** Sends `signal` to `pid`, or to process group `-pid` when negative; 0 and undefined are never signalled. */
function sendSignal(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined || pid === 0 || pid === -1) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * A tiny `sh`, in a process group of its own, that holds the read end of a pipe from this
 * process. When this process dies for any reason (SIGKILL included) the pipe closes, `read` sees
 * EOF and the shell SIGKILLs the child's whole process group.
 */
function startWatchdog(childPid: number): ChildProcess | undefined {
  try {
    const watchdog = spawn(
      '/bin/sh',
      [
        '-c',
        `trap '' INT QUIT TSTP HUP; while read -r _; do :; done; kill -KILL -"$1" 2>/dev/null || kill -KILL "$1" 2>/dev/null`,
        'react-agent-watchdog',
        String(childPid),
      ],
      {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
      },
    );
    watchdog.on('error', () => undefined);
    watchdog.stdin?.on('error', () => undefined);
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return watchdog;
  } catch {
    return undefined;
  }
}

/**
 * A child process the CLI starts and owns (the dev server, a worker). It runs in a process group
 * of its own, so a terminal's Ctrl-C — which goes to the whole foreground process group — reaches
 * only the CLI, which can then cancel the run and stop its children in order. It never outlives
 * this process: its group is SIGKILLed when this process exits, and by a watchdog when this
 * process dies without running exit handlers (a fatal signal, SIGKILL).
 */
export class OwnedProcess {
  /** Process id; undefined when the process could not be spawned. */
  readonly pid: number | undefined;
  /** Resolves when the process has exited (or failed to spawn). */
  readonly exited: Promise<ExitInfo>;
  private info: ExitInfo | undefined;
  private watchdog: ChildProcess | undefined;

  private constructor(readonly child: ChildProcess) {
    this.pid = child.pid;
    this.exited = new Promise<ExitInfo>((resolveExit) => {
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
      child.once('error', (error) => resolveExit({ code: null, signal: null, error }));
    });
    void this.exited.then((info) => {
      this.info = info;
      liveProcesses.delete(this);
      // Anything the process left behind in its group goes with it.
      if (OWN_GROUPS) sendSignal(this.pid === undefined ? undefined : -this.pid, 'SIGKILL');
      this.stopWatchdog();
    });
    if (this.pid !== undefined) {
      installExitHook();
      liveProcesses.add(this);
      if (OWN_GROUPS) this.watchdog = startWatchdog(this.pid);
    }
  }

  /** Spawns `command` in its own process group. */
  static spawn(command: string, args: readonly string[], options: OwnedProcessOptions = {}): OwnedProcess {
    const child = spawn(command, args, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
      stdio: options.stdio ?? 'ignore',
      detached: OWN_GROUPS,
      windowsHide: true,
    });
    return new OwnedProcess(child);
  }

  /** How it ended, once it has. */
  get exitInfo(): ExitInfo | undefined {
    return this.info;
  }

  /** True while the process has not exited. */
  get running(): boolean {
    return this.pid !== undefined && this.info === undefined;
  }

  /** This process as a wait for its readiness watches it (`waitUntilReady`): its exit, and its output in `logFile` from byte `logOffset` on. */
  readiness(logFile: string, logOffset = 0): ReadinessProcess {
    return {
      exitReason: () => (this.info === undefined ? undefined : describeExit(this.info)),
      exited: this.exited,
      logFile,
      logOffset,
    };
  }

  /** Sends `signal` to the process itself. */
  signal(signal: NodeJS.Signals): void {
    if (this.running) sendSignal(this.pid, signal);
  }

  /** Sends `signal` to the process and everything in its process group. */
  signalGroup(signal: NodeJS.Signals): void {
    if (!this.running) return;
    if (OWN_GROUPS) sendSignal(-(this.pid as number), signal);
    else sendSignal(this.pid, signal);
  }

  /**
   * SIGTERM to the process (so it can shut down gracefully), then SIGKILL to its group if it has
   * not exited within `graceMs`. Resolves when it has exited.
   */
  async stop(graceMs: number): Promise<ExitInfo> {
    if (!this.running) return this.exited;
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exitedInTime = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolveTimeout) => {
        timer = setTimeout(() => resolveTimeout(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!exitedInTime) this.signalGroup('SIGKILL');
    return this.exited;
  }

  /** SIGKILL to the group and its watchdog, synchronously (for exit handlers and crash tests). */
  killNow(): void {
    this.signalGroup('SIGKILL');
    this.stopWatchdog();
  }

  private stopWatchdog(): void {
    const watchdog = this.watchdog;
    this.watchdog = undefined;
    if (watchdog !== undefined && watchdog.exitCode === null && watchdog.signalCode === null) {
      try {
        watchdog.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
