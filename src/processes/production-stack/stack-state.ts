import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TemporalServiceName, TemporalServicePorts } from '../../config/stack-topology';
import { isAlive, type DaemonRecord } from './daemon';
import type { WorkerMachine } from './machine-addresses';
import type { StackWorker } from './worker-placement';

/** Ports of a stack, chosen at its first `up` and kept in its state file. */
export interface StackPorts {
  postgres: number;
  temporal: Record<TemporalServiceName, TemporalServicePorts>;
  ui: number;
  s3: number;
  /** The other listeners of `weed mini` (master, volume, filer, gRPC, admin). */
  seaweed: number[];
}

/** What `<stack folder>/stack.json` holds: everything a later `stack` command needs to find the stack again. */
export interface StackState {
  version: 1;
  ports: StackPorts;
  secrets: { postgresSuperuser: string; temporal: string };
  processes: Record<string, DaemonRecord>;
  workers: StackWorker[];
  /** The environment given to workers at `up` (the model server, tools), without the stack's own variables. */
  workerEnvironment: Record<string, string>;
  /** The worker machines of `up --machines`; kept while the stack is down, so `up` makes them again. */
  machines?: WorkerMachine[];
  /** Names this stack's namespaces and interfaces (4 hex digits, random, made with the first machine). */
  machineTag?: string;
  /** The /24 of 10.231.0.0/16 the machines have now (chosen again when they are made anew). */
  machineSubnet?: number;
  /** The ports each machine's relay forwards, by machine: a relay is restarted when they change. */
  relayedPorts?: Record<string, number[]>;
}

/** `REACT_AGENT_STACK_DIR`, else `$XDG_STATE_HOME/react-agent/stack`, else `~/.local/state/react-agent/stack`. */
export function defaultStackDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.REACT_AGENT_STACK_DIR) return resolve(environment.REACT_AGENT_STACK_DIR);
  return join(environment.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'react-agent', 'stack');
}

/**
 * A stack's folder and its state file, shared by the stack's components: each records its
 * process here (written at once, so a command that dies leaves no process unrecorded), and
 * logs to `logs/<name>.log`.
 */
export class StackFolder {
  private constructor(
    readonly directory: string,
    readonly state: StackState,
  ) {}

  /** The stack in `directory` (its `logs/` folder made): its saved state, or, for a new one, `initial()` saved. */
  static async open(directory: string, initial: () => Promise<StackState>): Promise<StackFolder> {
    const resolved = resolve(directory);
    mkdirSync(join(resolved, 'logs'), { recursive: true, mode: 0o700 });
    const stateFile = join(resolved, 'stack.json');
    if (existsSync(stateFile))
      return new StackFolder(resolved, JSON.parse(readFileSync(stateFile, 'utf8')) as StackState);
    const folder = new StackFolder(resolved, await initial());
    folder.save();
    return folder;
  }

  /** Writes the state file (mode 0600: it holds the secrets) through a rename, so a reader never sees half of it. */
  save(): void {
    const stateFile = join(this.directory, 'stack.json');
    const temporary = `${stateFile}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(this.state, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, stateFile);
  }

  /** Records the process called `name` (undefined: forgets it) and saves. */
  record(name: string, daemon: DaemonRecord | undefined): void {
    if (daemon === undefined) delete this.state.processes[name];
    else this.state.processes[name] = daemon;
    this.save();
  }

  /** The record of `name` while that process runs. */
  running(name: string): DaemonRecord | undefined {
    const record = this.state.processes[name];
    return isAlive(record) ? record : undefined;
  }

  /** Forgets every process that no longer runs, and saves. */
  forgetStopped(): void {
    for (const name of Object.keys(this.state.processes))
      if (!isAlive(this.state.processes[name])) delete this.state.processes[name];
    this.save();
  }

  /** `logs/<name>.log`: where the process called `name` writes. */
  logFile(name: string): string {
    return join(this.directory, 'logs', `${name}.log`);
  }

  /** A path inside the stack's folder. */
  path(...parts: string[]): string {
    return join(this.directory, ...parts);
  }
}
