import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DevServer } from '../../../src/processes/dev-server';
import type { ResearchRunResult } from '../../../src/core/run-result';

const root = resolve(__dirname, '../../..');

/** CLI processes still running: SIGKILLed (with their groups) when the test process exits. */
const running = new Set<CliProcess>();
process.on('exit', () => {
  for (const cli of running) cli.kill('SIGKILL');
});

export interface CliOptions {
  /** Environment of the command; `undefined` values are removed. */
  environment: Record<string, string | undefined>;
  /**
   * Start it as the leader of a new process group, as a shell starts a foreground job, so a test
   * can send a signal to the whole group the way a terminal's Ctrl-C does. Default false.
   */
  ownProcessGroup?: boolean;
  /** SIGKILL (the group, when it has one) after this long. Default 180 s. */
  timeoutMs?: number;
}

/** `react-agent` running in its own process, as a user runs it. */
export class CliProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly ownGroup: boolean,
    timeoutMs: number,
  ) {
    running.add(this);
    child.stdout.on('data', (data: Buffer) => (this.stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (this.stderr += data.toString()));
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    this.timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    this.exited = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        clearTimeout(this.timer);
        running.delete(this);
        resolveExit({ code, signal });
      }),
    );
  }

  static start(argumentsList: string[], options: CliOptions): CliProcess {
    const variables: Record<string, string | undefined> = { ...process.env, ...options.environment };
    for (const [name, value] of Object.entries(variables)) if (value === undefined) delete variables[name];
    const child = spawn(process.execPath, [join(root, 'bin/react-agent.js'), ...argumentsList], {
      cwd: root,
      env: variables as NodeJS.ProcessEnv,
      detached: options.ownProcessGroup ?? false,
    });
    return new CliProcess(child, options.ownProcessGroup ?? false, options.timeoutMs ?? 180_000);
  }

  /** Runs the command to its end. */
  static async complete(
    argumentsList: string[],
    options: CliOptions,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const cli = CliProcess.start(argumentsList, options);
    const { code } = await cli.exited;
    return { code, stdout: cli.stdout, stderr: cli.stderr };
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Resolves once stderr matches `pattern`; rejects if the process exits first or after `timeoutMs`. */
  async waitForStderr(pattern: RegExp, timeoutMs = 120_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.stderr);
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(`the CLI exited before printing ${pattern}:\n${this.stderr}`);
      if (Date.now() > deadline)
        throw new Error(`the CLI did not print ${pattern} within ${timeoutMs} ms:\n${this.stderr}`);
      await new Promise((resolveLater) => setTimeout(resolveLater, 100));
    }
  }

  /** Sends `signal` to the CLI's whole process group (as a terminal does), or to the CLI alone. */
  kill(signal: NodeJS.Signals): void {
    try {
      process.kill(this.ownGroup ? -this.pid : this.pid, signal);
    } catch {
      // already gone
    }
  }
}

/** The pids of `pid`'s descendants now (children, their children, ...), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may contain spaces; the parent pid is the 2nd field after it.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(parent, [...(parents.get(parent) ?? []), Number(name)]);
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of parents.get(queue.pop() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The command line of `pid`, for messages. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200);
  } catch {
    return '(gone)';
  }
}

/**
 * Reads a run from the database a local stack left behind (after `run` stopped its dev server),
 * by starting a dev server on that file again: its status and, when it completed, its result.
 */
export async function runFromDatabase(
  databaseFile: string,
  workflowId: string,
): Promise<{ status: string; result?: ResearchRunResult }> {
  const server = await DevServer.start({ port: 0, uiPort: false, databaseFile });
  const connection = await Connection.connect({ address: server.address });
  try {
    const handle = new Client({ connection }).workflow.getHandle(workflowId);
    const status = (await handle.describe()).status.name;
    return status === 'COMPLETED' ? { status, result: (await handle.result()) as ResearchRunResult } : { status };
  } finally {
    await connection.close();
    await server.stop();
  }
}
