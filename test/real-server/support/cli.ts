import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DevServer } from '../../../src/cli/dev-server';
import type { ResearchRunResult } from '../../../src/core/run-result';

const root = resolve(__dirname, '../../..');

/** CLI processes still running: SIGKILLed (with their groups) when the test process exits. */
const running = new Set<CliRun>();
process.on('exit', () => {
  for (const cli of running) cli.kill('SIGKILL');
});

export interface CliRunOptions {
  /** Variables over this process's environment; `undefined` removes one. */
  environment: Record<string, string | undefined>;
  /** Lead a new process group, as a shell starts a foreground job, so a signal can go to the whole group as a terminal's Ctrl-C does. Default false. */
  ownProcessGroup?: boolean;
  /** SIGKILL after this long. Default 180 s. */
  timeoutMs?: number;
}

/** `bin/react-agent.js` in its own process, as a user runs it. */
export class CliRun {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams, private readonly ownGroup: boolean, timeoutMs: number) {
    running.add(this);
    child.stdout.on('data', (data: Buffer) => (this.stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (this.stderr += data.toString()));
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    this.exited = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        running.delete(this);
        resolveExit({ code, signal });
      }),
    );
  }

  static start(argumentsList: string[], options: CliRunOptions): CliRun {
    const environment: Record<string, string | undefined> = { ...process.env, ...options.environment };
    for (const [name, value] of Object.entries(environment)) if (value === undefined) delete environment[name];
    const child = spawn(process.execPath, [join(root, 'bin/react-agent.js'), ...argumentsList], {
      cwd: root,
      env: environment as NodeJS.ProcessEnv,
      detached: options.ownProcessGroup ?? false,
    });
    return new CliRun(child, options.ownProcessGroup ?? false, options.timeoutMs ?? 180_000);
  }

  /** Runs the command to its end. */
  static async complete(argumentsList: string[], options: CliRunOptions): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const cli = CliRun.start(argumentsList, options);
    const { code } = await cli.exited;
    return { code, stdout: cli.stdout, stderr: cli.stderr };
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Resolves once stderr matches `pattern`; rejects when the command exits first or after `timeoutMs`. */
  async waitForStderr(pattern: RegExp, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.stderr)) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`the CLI exited before printing ${pattern}:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`the CLI did not print ${pattern} within ${timeoutMs} ms:\n${this.stderr}`);
      await new Promise((resolveLater) => setTimeout(resolveLater, 100));
    }
  }

  /** Sends `signal` to the CLI's whole process group (as a terminal does) when it leads one, else to the CLI. */
  kill(signal: NodeJS.Signals): void {
    try {
      process.kill(this.ownGroup ? -this.pid : this.pid, signal);
    } catch {
      // already gone
    }
  }
}

function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after it are state, ppid, pgrp, ...
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The pids of `pid`'s descendants now (children, their children, ...), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const parent = Number(statFields(name)?.[1]);
    if (Number.isFinite(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of children.get(queue.pop() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Whether `pid` is a live process (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
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
 * A run as the database a stopped local stack left behind records it: a dev server is started
 * on that file again (a free port, no UI) and asked for the run's status and, when it completed,
 * its result.
 */
export async function runFromDatabase(databaseFile: string, workflowId: string): Promise<{ status: string; result?: ResearchRunResult }> {
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
