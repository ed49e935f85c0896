import { availableParallelism } from 'node:os';
import { forEachAtMost } from '../../core/task-slots';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import type { WorkerMachine } from './machine-addresses';
import { environmentOnMachine } from './machine-environment';
import { machineNamed } from './machine-fleet';
import { quietly, type StackLog } from './stack-component';
import type { StackFolder } from './stack-state';
import { WorkerComponent } from './worker-component';
import { portsToRelay, stackWorkerEnvironment } from './worker-environment';
import { workersWanted, type StackWorker, type WorkerRole } from './worker-placement';

/** How long a worker gets after SIGTERM when it is no longer wanted or its machine goes. */
const REPLACED_WORKER_GRACE_MS = 15_000;

/** What the workers are pointed at. */
export interface WorkerFleetReach {
  /** The frontend as seen from the host (`127.0.0.1:<port>`). */
  temporalAddress: string;
  /** The S3 store's variables as seen from the host. */
  s3Environment: () => Record<string, string>;
}

/**
 * The stack's agent workers together: which there are (by role, dealt to the machines), what each
 * is told, and starting and stopping them.
 */
export class WorkerFleet {
  constructor(
    private readonly folder: StackFolder,
    private readonly reach: WorkerFleetReach,
  ) {}

  get workers(): readonly StackWorker[] {
    return this.folder.state.workers;
  }

  private get machines(): readonly WorkerMachine[] {
    return this.folder.state.machines ?? [];
  }

  /** A worker's environment as seen from the host (worker-environment.ts), with its own data folder. */
  environment(worker: StackWorker): Record<string, string> {
    return stackWorkerEnvironment(worker, {
      given: this.folder.state.workerEnvironment,
      temporalAddress: this.reach.temporalAddress,
      s3: this.reach.s3Environment(),
      dataDirectory: (someone) => this.folder.path('workers', someone.name),
    });
  }

  /** Everything a worker process gets: this process's environment and {@link environment}, its loopback addresses moved across the link on a machine. */
  private processEnvironment(worker: StackWorker): NodeJS.ProcessEnv {
    const environment = { ...process.env, ...this.environment(worker) };
    return worker.machine === undefined
      ? environment
      : environmentOnMachine(environment, machineNamed(this.machines, worker.machine).hostAddress);
  }

  /** The ports a machine's relay forwards: every loopback port a worker of any role is given. */
  relayedPorts(): number[] {
    return portsToRelay((worker) => ({ ...process.env, ...this.environment(worker) }));
  }

  component(worker: StackWorker): WorkerComponent {
    const machine =
      worker.machine === undefined ? undefined : this.machines.find((candidate) => candidate.name === worker.machine);
    return new WorkerComponent(this.folder, worker, () => this.processEnvironment(worker), machine);
  }

  components(): WorkerComponent[] {
    return this.workers.map((worker) => this.component(worker));
  }

  /** Stops the workers on `machine` (before it goes: they would lose their network). */
  async stopOn(machine: WorkerMachine): Promise<void> {
    await Promise.all(
      this.workers
        .filter((worker) => worker.machine === machine.name)
        .map((worker) => this.component(worker).stop(quietly, REPLACED_WORKER_GRACE_MS)),
    );
  }

  /**
   * Decides the workers (worker-placement.ts's `workersWanted`), stops those no longer wanted
   * where they are, and starts those not running, a few at a time: on a small machine, many
   * workers loading at once each take long to poll.
   */
  async up(
    counts: Partial<Record<WorkerRole, number>> | undefined,
    machinesChanged: boolean,
    log: StackLog,
  ): Promise<void> {
    const { state } = this.folder;
    const wanted = workersWanted(state.workers, {
      counts,
      machinesChanged,
      fleets: STACK_TOPOLOGY.workers.fleets,
      machines: this.machines.map((machine) => machine.name),
    });
    if (wanted !== undefined) {
      for (const old of state.workers) {
        if (wanted.some((worker) => worker.name === old.name && worker.machine === old.machine)) continue;
        const gone = this.component(old);
        await gone.stop(quietly, REPLACED_WORKER_GRACE_MS);
        gone.forget();
      }
      state.workers = wanted;
      this.folder.save();
    }
    await forEachAtMost(this.components(), availableParallelism(), (worker) => worker.start(log));
  }

  /** Stops every worker at once (each finishing what it runs, 20 s at most). */
  async down(log: StackLog): Promise<void> {
    await Promise.all(this.components().map((worker) => worker.stop(log)));
  }
}
