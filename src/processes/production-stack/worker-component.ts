import { mkdirSync } from 'node:fs';
import { logSince } from '../log-tail';
import { waitUntilReady } from '../readiness';
import { PROJECT_ROOT, projectEntryArguments } from '../typescript-process';
import { workerProcessEnvironment } from '../worker-process-environment';
import type { WorkerMachine } from './machine-addresses';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import type { StackFolder } from './stack-state';
import type { StackWorker } from './worker-placement';

/** What a worker prints once it polls (worker/main.ts). */
const POLLING_LINE = 'react-agent worker:';
const START_TIMEOUT_MS = 120_000;
/** How long `down` gives a worker after SIGTERM to finish what it runs. */
const STOP_GRACE_MS = 20_000;

/**
 * One agent worker of the stack (`worker/main.ts`, a role's queues): on the host, or inside its
 * machine's network namespace (`ip netns exec`, which execs node there, so the recorded pid is the
 * worker's). Ready once it says it polls.
 */
export class WorkerComponent implements StackComponent {
  readonly name: string;
  private readonly daemon: StackDaemon;
  /** Its output since the start this object made; until then, the end of its log. */
  private output: () => string;

  /**
   * @param environment Everything the worker gets (its loopback addresses moved across its machine's link).
   * @param machine The machine it runs on; the host when undefined.
   */
  constructor(
    folder: StackFolder,
    readonly worker: StackWorker,
    private readonly environment: () => NodeJS.ProcessEnv,
    private readonly machine: WorkerMachine | undefined,
  ) {
    this.name = worker.name;
    this.daemon = new StackDaemon(folder, worker.name);
    this.output = () => logSince(this.daemon.logFile);
  }

  /** Starts the worker unless it runs, in its data folder, and resolves once it polls. */
  async start(log: StackLog): Promise<void> {
    if (this.daemon.running) return;
    const environment = workerProcessEnvironment(this.environment());
    mkdirSync(environment.REACT_AGENT_DATA_DIR as string, { recursive: true });
    const nodeArguments = projectEntryArguments('worker/main.ts');
    const machine = this.machine;
    const [command, args] = machine
      ? ['ip', ['netns', 'exec', machine.namespace, process.execPath, ...nodeArguments]]
      : [process.execPath, nodeArguments];
    const started = Date.now();
    const spawned = this.daemon.spawn(command as string, args as string[], { env: environment, cwd: PROJECT_ROOT });
    this.output = spawned.output;
    await waitUntilReady({
      what: `Worker ${this.name}`,
      probe: () => this.ready(),
      timeoutMs: START_TIMEOUT_MS,
      process: spawned.readiness,
      outputLines: 12,
    });
    log(
      `Worker ${this.name} (${this.worker.role}${machine ? `, on ${machine.name} ${machine.address}` : ''}): pid ${spawned.pid} (${Date.now() - started} ms)`,
    );
  }

  /** Whether it runs and has said it polls. */
  async ready(): Promise<string | undefined> {
    if (!this.daemon.running) return 'stopped';
    return this.output().includes(POLLING_LINE) ? undefined : 'not polling yet';
  }

  /** SIGTERM (it finishes what it runs), then SIGKILL after `graceMs` (default 20 s). */
  async stop(log: StackLog, graceMs = STOP_GRACE_MS): Promise<void> {
    await this.daemon.stopIfRunning(log, graceMs);
  }

  /** Drops its record (a worker no longer wanted). */
  forget(): void {
    this.daemon.forget();
  }

  async status(): Promise<StackProcessStatus> {
    const machine = this.machine;
    return this.daemon.statusRow(
      async () => 'running',
      machine ? { address: `${machine.name} ${machine.address}`, machine: machine.name } : {},
    );
  }
}
