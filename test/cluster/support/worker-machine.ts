import { spawnSync } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A worker "machine" for the cluster tier: a network namespace of its own with a veth pair to the
 * host (10.<a>.<b>.2 inside, 10.<a>.<b>.1 on the host side), so its workers share nothing with
 * the rest but what they reach over that link. The stack's services listen on loopback only; for
 * each of them the machine gets a relay on its host-side address (the same port, forwarded to
 * 127.0.0.1), so `ip link set … down` cuts the machine off from Temporal, S3 and the model at
 * once, and `up` brings it back. Root only (`ip netns`). Every machine this process created is
 * deleted at its exit, whatever happened.
 */
export class WorkerMachine {
  private readonly relays: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private cutAt: number | undefined;

  private constructor(
    readonly name: string,
    readonly namespace: string,
    private readonly hostInterface: string,
    readonly hostAddress: string,
    readonly address: string,
  ) {}

  /** Creates the namespace, the veth pair and the addresses; `index` (1–63) picks the subnet. */
  static create(index: number): WorkerMachine {
    const tag = `${process.pid % 10_000}m${index}`;
    const namespace = `react-agent-${tag}`;
    const hostInterface = `ra${tag}h`;
    const peer = `ra${tag}n`;
    // A /30 per machine in 10.231.0.0/16, by pid and index, so two runs on one host do not meet.
    const block = ((process.pid % 63) * 64 + index) * 4;
    const prefix = `10.231.${Math.floor(block / 256)}.${block % 256}`;
    const base = block % 256;
    const hostAddress = `10.231.${Math.floor(block / 256)}.${base + 1}`;
    const address = `10.231.${Math.floor(block / 256)}.${base + 2}`;
    const machine = new WorkerMachine(`machine-${index}`, namespace, hostInterface, hostAddress, address);
    created.add(machine);
    try {
      ip(['netns', 'add', namespace]);
      ip(['link', 'add', hostInterface, 'type', 'veth', 'peer', 'name', peer]);
      ip(['link', 'set', peer, 'netns', namespace]);
      ip(['addr', 'add', `${hostAddress}/30`, 'dev', hostInterface]);
      ip(['link', 'set', hostInterface, 'up']);
      ip(['-n', namespace, 'addr', 'add', `${address}/30`, 'dev', peer]);
      ip(['-n', namespace, 'link', 'set', peer, 'up']);
      ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
    } catch (error) {
      machine.destroy();
      throw new Error(`Could not create the worker machine ${namespace} (${prefix}/30): ${(error as Error).message}`);
    }
    return machine;
  }

  /** Relays `port` on the host-side address to 127.0.0.1:`port` (Temporal's frontend, S3, the model server). */
  async relay(port: number): Promise<void> {
    const server = createServer((incoming) => {
      const outgoing = connect({ host: '127.0.0.1', port });
      for (const socket of [incoming, outgoing]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          incoming.destroy();
          outgoing.destroy();
        });
      }
      incoming.pipe(outgoing);
      outgoing.pipe(incoming);
    });
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen({ host: this.hostAddress, port }, () => resolveListen());
    });
    this.relays.push(server);
  }

  /** `ip link set <host side> down`: nothing passes until {@link restore}. */
  cut(): void {
    ip(['link', 'set', this.hostInterface, 'down']);
    this.cutAt = Date.now();
  }

  /** `ip link set <host side> up` (and the namespace's side, should it have gone down with it). */
  restore(): void {
    ip(['link', 'set', this.hostInterface, 'up']);
    ip(['-n', this.namespace, 'link', 'set', this.hostInterface.replace(/h$/, 'n'), 'up']);
    this.cutAt = undefined;
  }

  get isCut(): boolean {
    return this.cutAt !== undefined;
  }

  /** Closes the relays and deletes the namespace and the veth pair. Idempotent. */
  destroy(): void {
    for (const server of this.relays.splice(0)) server.close();
    for (const socket of this.sockets) socket.destroy();
    destroyNamespace(this.namespace, this.hostInterface);
    created.delete(this);
  }
}

const created = new Set<WorkerMachine>();
process.on('exit', () => {
  for (const machine of created) destroyNamespace(machine.namespace, (machine as unknown as { hostInterface: string }).hostInterface);
});

function destroyNamespace(namespace: string, hostInterface: string): void {
  spawnSync('ip', ['link', 'del', hostInterface], { stdio: 'ignore' });
  spawnSync('ip', ['netns', 'del', namespace], { stdio: 'ignore' });
}

function ip(args: string[]): void {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.error) throw new Error(`ip ${args.join(' ')}: ${result.error.message} (is iproute2 installed?)`);
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim()} (network namespaces need root)`);
}

/** Whether this process may create network namespaces (root with iproute2); the reason when not. */
export function namespacesUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `'ip netns' does not work here: ${probe.error?.message ?? probe.stderr.trim()}`;
  return undefined;
}
