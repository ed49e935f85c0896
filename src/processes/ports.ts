import { createServer, type AddressInfo } from 'node:net';
import { NotReadyError, waitUntilReady } from './readiness';

/** The interface every process this project starts listens on. */
const HOST = '127.0.0.1';

const recentlyIssuedPorts = new Set<number>();

/** Binds `port` (0 = any) on 127.0.0.1, releases it and returns the port number; rejects if it is taken. */
function bindAndRelease(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port, host: HOST, exclusive: true }, () => {
      const { port: bound } = server.address() as AddressInfo;
      server.close(() => resolvePort(bound));
    });
  });
}

/** A TCP port on 127.0.0.1 that is free right now; never the same one twice within this process. */
export async function findFreePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = await bindAndRelease(0);
    if (!recentlyIssuedPorts.has(port)) {
      recentlyIssuedPorts.add(port);
      if (recentlyIssuedPorts.size > 4096) {
        const oldest = recentlyIssuedPorts.values().next().value;
        if (oldest !== undefined) recentlyIssuedPorts.delete(oldest);
      }
      return port;
    }
  }
  throw new Error('Could not find a free TCP port on 127.0.0.1');
}

/** Whether `port` on 127.0.0.1 can be bound right now. */
export async function isPortFree(port: number): Promise<boolean> {
  try {
    await bindAndRelease(port);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits until every one of `ports` on 127.0.0.1 is free (a killed process's ports may linger a
 * moment); resolves with undefined then, or with a port still in use after `timeoutMs` (0: look
 * once), for the caller to say what holds it.
 */
export async function waitUntilPortsFree(
  ports: readonly number[],
  timeoutMs: number,
  intervalMs = 250,
): Promise<number | undefined> {
  let inUse: number | undefined;
  try {
    await waitUntilReady({
      what: `ports ${ports.join(', ')} on ${HOST}`,
      probe: async () => {
        inUse = undefined;
        for (const port of ports) {
          if (await isPortFree(port)) continue;
          inUse = port;
          return `port ${port} is in use`;
        }
        return undefined;
      },
      timeoutMs,
      intervalMs,
    });
    return undefined;
  } catch (error) {
    if (error instanceof NotReadyError && inUse !== undefined) return inUse;
    throw error;
  }
}
