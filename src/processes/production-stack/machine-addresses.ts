/**
 * Names and addresses of a stack's worker machines (`react-agent stack up --machines N`). Each
 * stack takes one /24 of 10.231.0.0/16, `10.231.<subnet>.0/24`, and each of its machines a /30
 * in it: machine n has `10.231.<subnet>.<4(n-1)+2>`, the host's end of its link
 * `10.231.<subnet>.<4(n-1)+1>`. The subnet is chosen when the machines are made, among the ones
 * no interface of this host uses, starting from one derived from the stack's tag (so two stacks
 * made at once rarely try the same one); the tag (4 hex digits, random, kept in stack.json) also
 * names the namespaces and interfaces, so two stacks on one host never share a name.
 */

/** The first two octets of every machine address. */
export const MACHINE_NETWORK = '10.231';

/** Machines of one stack: the /30s in its /24. */
export const MAX_MACHINES = 64;

/** A worker machine: a network namespace joined to the host by a veth pair. */
export interface WorkerMachine {
  /** `machine-<n>`: what `stack cut`, `stack restore` and `stack status` call it. */
  name: string;
  /** Its network namespace (`ip netns`). */
  namespace: string;
  /** The veth end on the host, which carries {@link hostAddress}; `stack cut` sets it down. */
  hostInterface: string;
  /** The veth end inside the namespace, which carries {@link address}. */
  machineInterface: string;
  /** The host as the machine sees it, across the link: the machine's relay listens here. */
  hostAddress: string;
  /** The machine's own address. */
  address: string;
}

/** True for a tag of {@link machineLayout}: 4 lowercase hex digits (interface names have 15 characters at most). */
export function isMachineTag(tag: string): boolean {
  return /^[0-9a-f]{4}$/.test(tag);
}

/** Machine `index` (1 to {@link MAX_MACHINES}) of the stack with `tag`, in `10.231.<subnet>.0/24`. */
export function machineLayout(tag: string, subnet: number, index: number): WorkerMachine {
  if (!isMachineTag(tag)) throw new RangeError(`machine tag ${JSON.stringify(tag)} is not 4 lowercase hex digits`);
  if (!Number.isInteger(subnet) || subnet < 0 || subnet > 255) throw new RangeError(`subnet ${subnet} is not 0-255`);
  if (!Number.isInteger(index) || index < 1 || index > MAX_MACHINES)
    throw new RangeError(`machine ${index} is not 1-${MAX_MACHINES}`);
  const base = 4 * (index - 1);
  return {
    name: `machine-${index}`,
    namespace: `react-agent-${tag}-m${index}`,
    hostInterface: `ra${tag}m${index}h`,
    machineInterface: `ra${tag}m${index}n`,
    hostAddress: `${MACHINE_NETWORK}.${subnet}.${base + 1}`,
    address: `${MACHINE_NETWORK}.${subnet}.${base + 2}`,
  };
}

/** The subnets (third octets) of 10.231.0.0/16 that addresses in `ip -o -4 addr show`'s output use. */
export function subnetsInUse(ipAddressListing: string): Set<number> {
  const used = new Set<number>();
  const pattern = new RegExp(`\\binet ${MACHINE_NETWORK.replace('.', '\\.')}\\.(\\d{1,3})\\.\\d{1,3}/`, 'g');
  for (const match of ipAddressListing.matchAll(pattern)) used.add(Number(match[1]));
  return used;
}

/** The subnet derived from a tag: where {@link chooseSubnet} starts looking. */
export function preferredSubnet(tag: string): number {
  return Number.parseInt(tag, 16) % 256;
}

/** `preferred` when no address uses it, else the next free one (wrapping at 255); undefined when all 256 are used. */
export function chooseSubnet(inUse: ReadonlySet<number>, preferred: number): number | undefined {
  for (let step = 0; step < 256; step += 1) {
    const subnet = (preferred + step) % 256;
    if (!inUse.has(subnet)) return subnet;
  }
  return undefined;
}
