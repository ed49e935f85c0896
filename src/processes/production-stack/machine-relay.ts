import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A worker machine's relay: for each port, a listener on the host's end of the machine's link
 * that forwards every connection to the same port on 127.0.0.1, where the stack's services (and a
 * model server on loopback) listen. It runs as a daemon of the stack (`machine-relay-main.ts`),
 * one per machine, so it outlives the command that made the machines.
 */
export interface MachineRelay {
  /** The ports relayed; a port already served on the listen address (by a service on all addresses) is left out. */
  readonly relayed: number[];
  readonly served: number[];
  close(): void;
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
}

/** Listens on `listenHost` for every port and forwards to `targetHost` (default 127.0.0.1) on the same port. */
export async function startMachineRelay(
  listenHost: string,
  ports: readonly number[],
  targetHost = '127.0.0.1',
): Promise<MachineRelay> {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const relayed: number[] = [];
  const served: number[] = [];
  const close = () => {
    for (const server of servers) server.close();
    for (const socket of sockets) socket.destroy();
  };
  try {
    for (const port of ports) {
      const server = createServer((incoming) => {
        const outgoing = connect({ host: targetHost, port });
        for (const socket of [incoming, outgoing]) {
          sockets.add(socket);
          socket.setKeepAlive(true, 10_000);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            incoming.destroy();
            outgoing.destroy();
          });
        }
        incoming.pipe(outgoing);
        outgoing.pipe(incoming);
      });
      try {
        await listen(server, listenHost, port);
        servers.push(server);
        relayed.push(port);
      } catch (error) {
        // A service listening on all addresses already answers there: the machine reaches it directly.
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        served.push(port);
      }
    }
  } catch (error) {
    close();
    throw error;
  }
  return { relayed, served, close };
}
