import { startMachineRelay } from './machine-relay';

/*
 * The relay daemon of a worker machine: `node machine-relay-main.js <host address> <port>...`,
 * started by `react-agent stack up --machines N` (ProductionStack) and stopped by `stack down`.
 * It prints what it relays, then runs until it is signalled.
 */

async function main(): Promise<void> {
  const [listenHost, ...portTexts] = process.argv.slice(2);
  const ports = portTexts.map(Number);
  if (!listenHost || ports.length === 0 || ports.some((port) => !Number.isInteger(port) || port < 1 || port > 65_535)) {
    console.error('usage: machine-relay-main <host address> <port>...');
    process.exit(2);
  }
  const relay = await startMachineRelay(listenHost, ports);
  for (const port of relay.relayed) console.log(`relay: ${listenHost}:${port} -> 127.0.0.1:${port}`);
  for (const port of relay.served)
    console.log(`relay: ${listenHost}:${port} is served there already (a service on all addresses); not relayed`);
  console.log('relay: ready');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      relay.close();
      process.exit(0);
    });
  }
}

main().catch((error: unknown) => {
  console.error(`relay: ${(error as Error).message}`);
  process.exit(1);
});
