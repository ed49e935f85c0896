import { waitUntilReady } from '../readiness';
import { PROJECT_ROOT, projectEntryArguments } from '../typescript-process';
import type { WorkerMachine } from './machine-addresses';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';
import { createMachine, cutMachine, deleteMachine, machineLinkState, restoreMachine } from './worker-machine';

/** What the relay prints once it listens on every port (machine-relay-main.ts). */
const RELAY_READY_LINE = 'relay: ready';
const RELAY_START_TIMEOUT_MS = 60_000;
const RELAY_STOP_GRACE_MS = 5_000;

/**
 * A worker machine (worker-machine.ts: a network namespace and its veth pair) with its relay, the
 * daemon `relay-<machine>` that forwards the ports its workers are given across the link to
 * 127.0.0.1 (machine-relay.ts). Ready when the link is up and the relay runs. Its workers are
 * components of their own; whoever stops a machine stops them first.
 */
export class MachineComponent implements StackComponent {
  readonly name: string;
  private readonly relay: StackDaemon;
  private madeAnew = false;

  /** @param relayedPorts The ports its relay is to forward (every loopback port a worker is given). */
  constructor(
    private readonly folder: StackFolder,
    readonly machine: WorkerMachine,
    private readonly relayedPorts: () => number[],
  ) {
    this.name = machine.name;
    this.relay = new StackDaemon(folder, `relay-${machine.name}`);
  }

  /** Whether this object made the machine (then its relay is started anew, whatever runs). */
  get madeNow(): boolean {
    return this.madeAnew;
  }

  /** Makes the machine when it does not exist (what is left of it after a crash deleted first), or says its link is cut. */
  make(log: StackLog): void {
    const { machine } = this;
    const state = machineLinkState(machine);
    if (state === 'missing') {
      deleteMachine(machine);
      createMachine(machine);
      this.madeAnew = true;
      log(
        `Machine ${machine.name}: network namespace ${machine.namespace}, ${machine.address} (host end ${machine.hostAddress} on ${machine.hostInterface})`,
      );
    } else if (state === 'cut') {
      log(`Machine ${machine.name}: its link is cut ('stack restore ${machine.name}' brings it back)`);
    }
  }

  /**
   * Makes the machine when it does not exist and starts its relay unless it runs for these ports
   * on a machine not made anew; resolves once the relay listens.
   */
  async start(log: StackLog): Promise<void> {
    if (machineLinkState(this.machine) === 'missing') this.make(log);
    const { machine } = this;
    const ports = this.relayedPorts();
    const relayed = this.folder.state.relayedPorts?.[machine.name];
    if (!this.madeAnew && this.relay.running && relayed?.join(',') === ports.join(',')) return;
    await this.relay.stop(RELAY_STOP_GRACE_MS);
    const spawned = this.relay.spawn(
      process.execPath,
      [
        ...projectEntryArguments('src/processes/production-stack/machine-relay-main.ts'),
        machine.hostAddress,
        ...ports.map(String),
      ],
      { env: process.env, cwd: PROJECT_ROOT },
    );
    this.folder.state.relayedPorts = { ...this.folder.state.relayedPorts, [machine.name]: ports };
    this.folder.save();
    await waitUntilReady({
      what: `The relay of ${machine.name}`,
      probe: async () => (spawned.output().includes(RELAY_READY_LINE) ? undefined : 'not listening yet'),
      timeoutMs: RELAY_START_TIMEOUT_MS,
      intervalMs: 100,
      process: spawned.readiness,
      outputLines: 8,
    });
    log(`Machine ${machine.name}: relay on ${machine.hostAddress} for ports ${ports.join(', ')} (pid ${spawned.pid})`);
  }

  async ready(): Promise<string | undefined> {
    const link = machineLinkState(this.machine);
    if (link === 'missing') return 'no namespace';
    if (link === 'cut') return 'link cut';
    return this.relay.running ? undefined : 'relay stopped';
  }

  /** Stops the relay (its workers lose Temporal, S3 and the model until it runs again); true when it ran. */
  async stopRelay(): Promise<boolean> {
    if (!this.relay.running) return false;
    await this.relay.stop(RELAY_STOP_GRACE_MS);
    this.relay.forget();
    return true;
  }

  /** Stops the relay and deletes the namespace and veth pair (the machine's description stays in stack.json). */
  async stop(log: StackLog): Promise<void> {
    const existed = machineLinkState(this.machine) !== 'missing';
    await this.relay.stop(RELAY_STOP_GRACE_MS);
    this.relay.forget();
    deleteMachine(this.machine);
    if (existed) log(`deleted ${this.name} (network namespace ${this.machine.namespace} and its veth pair)`);
  }

  /** Deletes the namespace and veth pair at once, synchronously (for an exit hook). */
  deleteNow(): void {
    deleteMachine(this.machine);
  }

  /** `stack cut`: sets the host's end of the link down; its workers keep running, cut off. */
  cut(): void {
    this.mustExist();
    cutMachine(this.machine);
  }

  /** `stack restore`: sets the link up again. */
  restore(): void {
    this.mustExist();
    restoreMachine(this.machine);
  }

  private mustExist(): void {
    if (machineLinkState(this.machine) === 'missing')
      throw new StackError(`Machine ${this.name} does not exist now ('stack up' makes it).`);
  }

  async status(): Promise<StackProcessStatus> {
    const relay = this.relay.record;
    const link = machineLinkState(this.machine);
    const { machine } = this;
    return {
      name: this.name,
      ...(relay ? { pid: relay.pid } : {}),
      running: link !== 'missing' && relay !== undefined,
      health: link === 'missing' ? 'no namespace' : link === 'cut' ? 'link cut' : relay ? 'ready' : 'relay stopped',
      address: `${machine.address} (netns ${machine.namespace}; host end ${machine.hostAddress})`,
    };
  }
}
