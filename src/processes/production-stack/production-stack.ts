import { randomBytes } from 'node:crypto';
import { STACK_TOPOLOGY, TEMPORAL_SERVICES, type TemporalServiceName } from '../../config/stack-topology';
import type { DaemonRecord } from './daemon';
import type { WorkerMachine } from './machine-addresses';
import { checkMachineCount, MachineFleet } from './machine-fleet';
import { STACK_HOST } from './network-probes';
import { PostgresComponent } from './postgres-component';
import type { PostgresCluster } from './postgres-cluster';
import { SeaweedComponent } from './seaweed-component';
import { quietly, type StackComponent, type StackLog, type StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import { StackError } from './stack-error';
import { newStackPorts } from './stack-ports';
import { defaultStackDirectory, StackFolder, type StackPorts } from './stack-state';
import { applyTemporalSchemas } from './temporal-schemas';
import { temporalServerTools } from './temporal-server-tools';
import { TemporalServiceComponent } from './temporal-service-component';
import { temporalServingProblem, waitUntilTemporalServes } from './temporal-serving';
import { WebUiComponent } from './web-ui-component';
import { WorkerFleet } from './worker-fleet';
import type { StackWorker, WorkerRole } from './worker-placement';

export { StackError } from './stack-error';
export { defaultStackDirectory, type StackPorts } from './stack-state';
export { temporalServerTools } from './temporal-server-tools';
export type { StackProcessStatus } from './stack-component';
export type { StackWorker, WorkerRole } from './worker-placement';
export type { WorkerMachine } from './machine-addresses';

export interface StackUpOptions {
  /** Worker processes per role; default the topology's replicas. */
  workers?: Partial<Record<WorkerRole, number>>;
  /**
   * Worker machines (network namespaces, docs/production.md) to deal the workers to in turn
   * (worker k on machine k mod N, in the topology's role order); 0 puts them all on the host.
   * Default: the machines of the last `up` (none at first). Needs root and iproute2.
   */
  machines?: number;
  /** Extra environment of the workers (the model server, tool modules); kept for later `up`s. Default: none beyond the process's own. */
  workerEnvironment?: Record<string, string>;
  /** Start the Web UI when it is built (default true). */
  ui?: boolean;
  /** Where `up` says what it started. Default: nowhere. */
  log?: StackLog;
}

/**
 * The production stack on this machine (docs/production.md): PostgreSQL, Temporal's frontend,
 * history, matching and worker services as separate processes, the Web UI, SeaweedFS, worker
 * machines and agent workers by role, all from src/config/stack-topology.json — each a component
 * (stack-component.ts) this class composes. Their processes outlive the command that started
 * them; their pids, ports and secrets are in `<directory>/stack.json`, so `up`, `status` and
 * `down` work across invocations. `up` starts whatever is not running (and is how a killed
 * service comes back); `down` stops everything and keeps the data.
 */
export class ProductionStack {
  private readonly postgresql: PostgresComponent;
  private readonly temporal: Record<TemporalServiceName, TemporalServiceComponent>;
  private readonly seaweed: SeaweedComponent;
  private readonly ui: WebUiComponent;
  private readonly machineFleet: MachineFleet;
  private readonly workerFleet: WorkerFleet;

  private constructor(private readonly folder: StackFolder) {
    this.postgresql = new PostgresComponent(folder);
    this.temporal = Object.fromEntries(
      TEMPORAL_SERVICES.map((service) => [service, new TemporalServiceComponent(folder, service)]),
    ) as Record<TemporalServiceName, TemporalServiceComponent>;
    this.workerFleet = new WorkerFleet(folder, {
      temporalAddress: this.address,
      s3Environment: () => this.s3Environment(),
    });
    this.machineFleet = new MachineFleet(
      folder,
      () => this.workerFleet.relayedPorts(),
      (machine) => this.workerFleet.stopOn(machine),
    );
    this.seaweed = new SeaweedComponent(folder, (log) => this.machineFleet.stopRelays(log));
    this.ui = new WebUiComponent(folder, this.address);
  }

  /** Opens the stack in `directory` (default {@link defaultStackDirectory}); a new one gets the topology's ports, or free ones with `freePorts`. */
  static async open(
    directory: string = defaultStackDirectory(),
    options: { freePorts?: boolean } = {},
  ): Promise<ProductionStack> {
    const folder = await StackFolder.open(directory, async () => ({
      version: 1,
      ports: await newStackPorts(options.freePorts === true),
      secrets: {
        postgresSuperuser: randomBytes(18).toString('base64url'),
        temporal: randomBytes(18).toString('base64url'),
      },
      processes: {},
      workers: [],
      workerEnvironment: {},
    }));
    return new ProductionStack(folder);
  }

  get directory(): string {
    return this.folder.directory;
  }

  get ports(): StackPorts {
    return this.folder.state.ports;
  }

  /** `127.0.0.1:<frontend port>`: TEMPORAL_ADDRESS of the CLI and of workers on this host. */
  get address(): string {
    return this.temporal.frontend.address;
  }

  get namespace(): string {
    return STACK_TOPOLOGY.temporal.namespace;
  }

  get uiUrl(): string {
    return this.ui.url;
  }

  get s3Endpoint(): string {
    return this.seaweed.endpoint;
  }

  get workers(): readonly StackWorker[] {
    return this.workerFleet.workers;
  }

  /** The worker machines of `up --machines` (also while the stack is down). */
  get machines(): readonly WorkerMachine[] {
    return this.machineFleet.machines;
  }

  /** The machine called `name` (`machine-2`); a StackError naming the machines there are otherwise. */
  machine(name: string): WorkerMachine {
    return this.machineFleet.component(name).machine;
  }

  /** The S3 variables of a client of the stack's store (and where transcripts go). */
  s3Environment(host = STACK_HOST): Record<string, string> {
    return this.seaweed.s3Environment(host);
  }

  /** What the CLI (or a test's client) needs to reach this stack: Temporal, the namespace, the queues and the store. */
  clientEnvironment(): Record<string, string> {
    return { TEMPORAL_ADDRESS: this.address, ...STACK_TOPOLOGY.workers.environment, ...this.s3Environment() };
  }

  postgres(): PostgresCluster {
    return this.postgresql.cluster();
  }

  /** Starts whatever is not running, in order; resolves when the stack answers end to end. */
  async up(options: StackUpOptions = {}): Promise<void> {
    const log = options.log ?? quietly;
    const machineCount = options.machines ?? this.machines.length;
    // Before anything starts: without namespaces there is nothing to start them for.
    checkMachineCount(machineCount, options.machines !== undefined);
    const tools = temporalServerTools();
    const { state } = this.folder;
    if (options.workerEnvironment !== undefined) state.workerEnvironment = { ...options.workerEnvironment };
    await this.postgresql.start(log);
    applyTemporalSchemas(
      {
        postgres: this.postgresql.cluster(),
        sqlTool: tools.sqlTool,
        temporalPassword: state.secrets.temporal,
        doneFile: this.folder.path('postgresql', 'schema-ready'),
      },
      log,
    );
    for (const service of TEMPORAL_SERVICES) await this.temporal[service].start(log, tools.server);
    await waitUntilTemporalServes(this.address, this.namespace, this.folder.path('logs'), log);
    await this.seaweed.start(log);
    if (options.ui !== false) await this.ui.start(log);
    await this.machineFleet.up(machineCount, log);
    await this.workerFleet.up(options.workers, options.machines !== undefined, log);
  }

  /** Starts one Temporal service (when not running) and waits until its gRPC port answers. */
  async startTemporalService(service: TemporalServiceName, serverBinary?: string): Promise<void> {
    await this.temporal[service].start(quietly, serverBinary);
  }

  /** Undefined when Temporal serves end to end (temporal-serving.ts; the namespace and search attributes are registered when missing), else what failed. */
  async servingProblem(log: StackLog = quietly): Promise<string | undefined> {
    return temporalServingProblem(this.address, this.namespace, log);
  }

  /** The environment of a worker of `role`: the topology's queues and fleet settings, Temporal, the S3 store, its own data folder (as seen from the host). */
  workerEnvironment(worker: StackWorker): Record<string, string> {
    return this.workerFleet.environment(worker);
  }

  /** Starts the worker when it is not running (inside its machine's namespace when it has one); resolves once it polls. */
  async startWorker(worker: StackWorker, log: StackLog = quietly): Promise<void> {
    await this.workerFleet.component(worker).start(log);
  }

  /** `stack cut <machine>`: sets the host's end of the machine's link down; its workers keep running, cut off. */
  cutMachine(name: string): void {
    this.machineFleet.component(name).cut();
  }

  /** `stack restore <machine>`: sets the machine's link up again. */
  restoreMachine(name: string): void {
    this.machineFleet.component(name).restore();
  }

  /** The process record of `name` (`temporal-history`, `seaweedfs`, `worker-model-1`, ...) while it runs. */
  processOf(name: string): DaemonRecord | undefined {
    return this.folder.running(name);
  }

  /** SIGKILL a process of the stack (a crash); `up` (or the start methods) bring it back. */
  async kill(name: string): Promise<void> {
    if (name === 'postgresql') throw new StackError('use stopPostgres("immediate") for PostgreSQL');
    await new StackDaemon(this.folder, name).kill();
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(name: string, graceMs = 15_000): Promise<void> {
    await new StackDaemon(this.folder, name).stop(graceMs);
  }

  /** `pg_ctl stop -m immediate` (a crash: recovery at the next start) or `fast`. */
  stopPostgres(mode: 'fast' | 'immediate'): void {
    this.postgres().stop(mode);
  }

  startPostgres(): void {
    const postgres = this.postgres();
    if (!postgres.running) postgres.start();
  }

  /** The stack's components in the order `up` starts them: PostgreSQL, Temporal's services, SeaweedFS, the Web UI, the machines, the workers. */
  private components(): StackComponent[] {
    return [
      this.postgresql,
      ...TEMPORAL_SERVICES.map((service) => this.temporal[service]),
      this.seaweed,
      this.ui,
      ...this.machineFleet.components(),
      ...this.workerFleet.components(),
    ];
  }

  /** Every process of the stack and whether it answers. */
  async status(): Promise<StackProcessStatus[]> {
    const rows: StackProcessStatus[] = [];
    for (const component of this.components()) {
      const row = await component.status();
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  /** SIGKILL every process of the stack, delete its machines and stop PostgreSQL at once, synchronously (for a test's exit hook: nothing may outlive it). */
  killAllNow(): void {
    for (const name of Object.keys(this.folder.state.processes)) {
      const record = this.folder.running(name);
      if (record === undefined) continue;
      try {
        process.kill(-record.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const machine of this.machineFleet.components()) machine.deleteNow();
    try {
      this.postgres().stop('immediate');
    } catch {
      // not running, or not installed
    }
  }

  /** Stops everything (workers first, then the machines' relays, deleting the machines; PostgreSQL last) and keeps the data and the machines' description. */
  async down(log: StackLog = quietly): Promise<void> {
    await this.workerFleet.down(log);
    await this.machineFleet.down(log);
    for (const component of [
      this.ui,
      this.seaweed,
      ...[...TEMPORAL_SERVICES].reverse().map((name) => this.temporal[name]),
    ])
      await component.stop(log);
    this.folder.forgetStopped();
    await this.postgresql.stop(log);
  }
}
