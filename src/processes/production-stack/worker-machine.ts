import { spawnSync } from 'node:child_process';
import type { WorkerMachine } from './machine-addresses';
import { StackError } from './stack-error';

/**
 * Worker machines on this host with iproute2: a network namespace each, joined to the host by a
 * veth pair (the machine's address inside, the host's end outside). A machine shares nothing
 * with the rest but what crosses that link, so setting the host's end down (`cutMachine`) takes
 * it off the network at once, and setting it up (`restoreMachine`) brings it back. Root only.
 */

/** Where a machine's link is: `up`, `cut` (host end down), or `missing` (no namespace or interface). */
export type MachineLinkState = 'up' | 'cut' | 'missing';

function ip(args: readonly string[], environment: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync('ip', args, { encoding: 'utf8', env: environment });
  if (result.error) throw new StackError(`ip ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new StackError(`ip ${args.join(' ')}: ${`${result.stderr}${result.stdout}`.trim()}`);
  return result.stdout;
}

function quietly(args: readonly string[]): void {
  spawnSync('ip', args, { stdio: 'ignore' });
}

/**
 * Why worker machines cannot be made here, or undefined when they can: they need root (making a
 * network namespace needs CAP_SYS_ADMIN) and `ip` from iproute2 on PATH, with `ip netns` working.
 */
export function machineSupportProblem(
  environment: NodeJS.ProcessEnv = process.env,
  uid: number | undefined = process.getuid?.(),
): string | undefined {
  if (uid !== 0)
    return `network namespaces need root, and this runs as uid ${uid ?? 'unknown'} (run 'stack up --machines' as root, or leave the workers on the host)`;
  const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8', env: environment });
  const code = (probe.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT')
    return `'ip' (iproute2) is not on PATH (${environment.PATH ?? 'no PATH'}); install it: apt-get install iproute2`;
  if (probe.error) return `'ip netns list' could not run: ${probe.error.message}`;
  if (probe.status !== 0) return `'ip netns list' fails here: ${`${probe.stderr}${probe.stdout}`.trim()}`;
  return undefined;
}

/** The host's addresses as `ip -o -4 addr show` lists them (for the subnets in use). */
export function hostAddressListing(): string {
  return ip(['-o', '-4', 'addr', 'show']);
}

/** Makes the namespace, the veth pair and the addresses; on a failure deletes what it made and throws. */
export function createMachine(machine: WorkerMachine): void {
  try {
    ip(['netns', 'add', machine.namespace]);
    ip(['link', 'add', machine.hostInterface, 'type', 'veth', 'peer', 'name', machine.machineInterface]);
    ip(['link', 'set', machine.machineInterface, 'netns', machine.namespace]);
    ip(['addr', 'add', `${machine.hostAddress}/30`, 'dev', machine.hostInterface]);
    ip(['link', 'set', machine.hostInterface, 'up']);
    ip(['-n', machine.namespace, 'addr', 'add', `${machine.address}/30`, 'dev', machine.machineInterface]);
    ip(['-n', machine.namespace, 'link', 'set', machine.machineInterface, 'up']);
    ip(['-n', machine.namespace, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    deleteMachine(machine);
    throw new StackError(
      `Could not make the worker machine ${machine.name} (network namespace ${machine.namespace}, ${machine.address}): ${(error as Error).message}`,
    );
  }
}

/** Deletes the veth pair and the namespace (what of them exists). Synchronous, so an exit hook can call it. */
export function deleteMachine(machine: WorkerMachine): void {
  quietly(['link', 'del', machine.hostInterface]);
  quietly(['netns', 'del', machine.namespace]);
}

function namespaceExists(namespace: string): boolean {
  const listing = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return listing.status === 0 && listing.stdout.split('\n').some((line) => line.split(' ')[0] === namespace);
}

/** Whether the machine exists and whether its link is up or cut. */
export function machineLinkState(machine: WorkerMachine): MachineLinkState {
  if (!namespaceExists(machine.namespace)) return 'missing';
  const link = spawnSync('ip', ['-o', 'link', 'show', 'dev', machine.hostInterface], { encoding: 'utf8' });
  if (link.status !== 0) return 'missing';
  const inside = spawnSync('ip', ['-n', machine.namespace, '-o', 'link', 'show', 'dev', machine.machineInterface], {
    encoding: 'utf8',
  });
  if (inside.status !== 0) return 'missing';
  // The flags are in angle brackets: <BROADCAST,MULTICAST,UP,LOWER_UP>; UP is the administrative state.
  const flags = /<([^>]*)>/.exec(link.stdout)?.[1]?.split(',') ?? [];
  return flags.includes('UP') ? 'up' : 'cut';
}

/** Sets the host's end of the link down: nothing passes until {@link restoreMachine}. */
export function cutMachine(machine: WorkerMachine): void {
  ip(['link', 'set', machine.hostInterface, 'down']);
}

/** Sets both ends of the link up again. */
export function restoreMachine(machine: WorkerMachine): void {
  ip(['link', 'set', machine.hostInterface, 'up']);
  ip(['-n', machine.namespace, 'link', 'set', machine.machineInterface, 'up']);
}
