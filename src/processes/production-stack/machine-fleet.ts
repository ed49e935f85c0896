import { randomBytes } from 'node:crypto';
import {
  chooseSubnet,
  machineLayout,
  MAX_MACHINES,
  preferredSubnet,
  subnetsInUse,
  type WorkerMachine,
} from './machine-addresses';
import { MachineComponent } from './machine-component';
import type { StackLog } from './stack-component';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';
import { hostAddressListing, machineLinkState, machineSupportProblem } from './worker-machine';

/** The machine called `name` (`machine-2`) among `machines`; a StackError naming the machines there are otherwise. */
export function machineNamed(machines: readonly WorkerMachine[], name: string): WorkerMachine {
  const machine = machines.find((candidate) => candidate.name === name);
  if (machine) return machine;
  const names = machines.map((candidate) => candidate.name);
  throw new StackError(
    `This stack has no machine ${name} (${names.length > 0 ? `its machines: ${names.join(', ')}` : "it has none: 'stack up --machines N' makes them"}).`,
  );
}

/**
 * A StackError when `count` machines cannot be had: not 0 to 64, or (for any) no network
 * namespaces here. `asked`: the count came from `--machines` rather than the last `up`.
 */
export function checkMachineCount(count: number, asked: boolean): void {
  if (!Number.isInteger(count) || count < 0 || count > MAX_MACHINES)
    throw new StackError(`--machines must be 0 to ${MAX_MACHINES}, got ${count}`);
  if (count === 0) return;
  const problem = machineSupportProblem();
  if (problem !== undefined)
    throw new StackError(
      asked
        ? `--machines needs network namespaces: ${problem}.`
        : `This stack's ${count} worker machines need network namespaces: ${problem} ('stack up --machines 0' puts the workers on the host).`,
    );
}

/**
 * The stack's worker machines together: how many there are (`up --machines N`), in which /24 of
 * 10.231.0.0/16, made all or none, and their relays.
 */
export class MachineFleet {
  /**
   * @param relayedPorts The ports every relay forwards.
   * @param stopWorkersOn Stops the workers on a machine before it goes (they would lose their network).
   */
  constructor(
    private readonly folder: StackFolder,
    private readonly relayedPorts: () => number[],
    private readonly stopWorkersOn: (machine: WorkerMachine) => Promise<void>,
  ) {}

  /** The machines of `up --machines` (also while the stack is down). */
  get machines(): readonly WorkerMachine[] {
    return this.folder.state.machines ?? [];
  }

  /** The stack's machines as components. */
  components(): MachineComponent[] {
    return this.machines.map((machine) => new MachineComponent(this.folder, machine, this.relayedPorts));
  }

  /** The machine called `name` as a component; a StackError naming the machines there are otherwise. */
  component(name: string): MachineComponent {
    return new MachineComponent(this.folder, machineNamed(this.machines, name), this.relayedPorts);
  }

  /**
   * Makes the `count` machines that do not exist (all anew, in a free subnet, when none does):
   * all or none, and only then their relays, each started when it is not running or forwards
   * other ports than it should. Deletes those beyond `count` first, with their workers.
   */
  async up(count: number, log: StackLog): Promise<void> {
    const { state } = this.folder;
    for (const surplus of this.components().slice(count)) {
      await this.remove(surplus, () => undefined);
      log(`Machine ${surplus.name}: deleted (${surplus.machine.namespace})`);
    }
    if (count === 0) {
      state.machines = [];
      this.folder.save();
      return;
    }
    const tag = (state.machineTag ??= randomBytes(2).toString('hex'));
    let subnet = state.machineSubnet;
    const existing = this.machines.slice(0, count).filter((machine) => machineLinkState(machine) !== 'missing');
    if (existing.length === 0 || subnet === undefined) {
      subnet = chooseSubnet(subnetsInUse(hostAddressListing()), subnet ?? preferredSubnet(tag));
      if (subnet === undefined)
        throw new StackError(`No /24 of 10.231.0.0/16 is free on this host for the worker machines.`);
    }
    state.machineSubnet = subnet;
    const machines: MachineComponent[] = [];
    try {
      for (let index = 1; index <= count; index += 1) {
        const machine = new MachineComponent(this.folder, machineLayout(tag, subnet, index), this.relayedPorts);
        machines.push(machine);
        machine.make(log);
      }
    } catch (error) {
      for (const machine of machines) if (machine.madeNow) machine.deleteNow();
      throw error;
    }
    state.machines = machines.map((machine) => machine.machine);
    this.folder.save();
    await Promise.all(machines.map((machine) => machine.start(log)));
  }

  /** Stops every machine's relay (while SeaweedFS starts: `weed mini` refuses a port a relay holds). */
  async stopRelays(log: StackLog): Promise<void> {
    for (const machine of this.components())
      if (await machine.stopRelay()) log(`Machine ${machine.name}: relay stopped while SeaweedFS starts`);
  }

  /** Deletes every machine (its workers stopped first); their description stays, so the next `up` makes them again. */
  async down(log: StackLog): Promise<void> {
    for (const machine of this.components()) await this.remove(machine, log);
  }

  private async remove(machine: MachineComponent, log: StackLog): Promise<void> {
    await this.stopWorkersOn(machine.machine);
    await machine.stop(log);
  }
}
