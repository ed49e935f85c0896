import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWorkerConfig } from '../../config';
import { DevServer } from '../../processes/dev-server';

export const serverHelp = `Usage: react-agent server [--port 7233] [--ui-port 8233] [--db FILE]

Runs the local Temporal dev server (SQLite file under the data directory, Web UI, the project's
search attributes registered) until Ctrl-C.`;

export async function serverCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argumentsList,
    options: { port: { type: 'string', default: '7233' }, 'ui-port': { type: 'string' }, db: { type: 'string' } },
  });
  const worker = loadWorkerConfig();
  const port = Number(values.port);
  const server = await DevServer.start({
    port,
    uiPort: values['ui-port'] ? Number(values['ui-port']) : port + 1000,
    databaseFile: values.db ?? join(worker.dataDirectory, 'temporal.sqlite'),
  });
  console.log(
    `Temporal dev server at ${server.address}; Web UI ${server.uiUrl ?? '(headless)'}; database ${server.databaseFile}; log ${server.logFile}. Ctrl-C stops it.`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
  return 0;
}
