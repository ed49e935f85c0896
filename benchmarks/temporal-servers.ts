import { join } from 'node:path';
import { DevServer } from '../src/processes/dev-server';
import { ProductionStack } from '../src/processes/production-stack/production-stack';

/**
 * The Temporal a benchmark measures against, chosen with `--temporal dev,stack`:
 *
 * - `dev`: `temporal server start-dev` (one process, SQLite), what every test runs on;
 * - `stack`: the production stack of `react-agent stack` (docs/production.md): PostgreSQL 15 and
 *   Temporal's frontend, history, matching and worker services as separate processes, started
 *   on free ports with no agent workers and no Web UI (the benchmark starts its own workers).
 *   Needs `npm run setup:temporal-server`.
 *
 * Both serve the `default` namespace with the project's search attributes.
 */
export type TemporalKind = 'dev' | 'stack';

export const TEMPORAL_KINDS: Readonly<Record<TemporalKind, string>> = {
  dev: 'dev server (SQLite)',
  stack: 'stack (PostgreSQL, 4 services)',
};

export interface TemporalUnderTest {
  kind: TemporalKind;
  /** `127.0.0.1:PORT` of the frontend. */
  address: string;
  /** The server's processes by group, for CPU accounting: `Temporal`, and `PostgreSQL` on the stack. */
  processGroups(): Promise<Record<string, number[]>>;
  /** The dev server's Prometheus metrics (`service_requests`, `persistence_requests` by operation); none on the stack. */
  metricsUrl?: string;
  /** Stops every process it started (the stack's data is in the benchmark's folder, removed with it). */
  stop(): Promise<void>;
}

/** Parses `--temporal`'s value: a comma-separated list of kinds. */
export function parseTemporalKinds(value: string): TemporalKind[] {
  const kinds = value.split(',').map((kind) => kind.trim());
  for (const kind of kinds)
    if (!(kind in TEMPORAL_KINDS))
      throw new Error(
        `--temporal: unknown server ${JSON.stringify(kind)}; use ${Object.keys(TEMPORAL_KINDS).join(', ')}`,
      );
  return kinds as TemporalKind[];
}

/** Options of {@link startTemporal}. */
export interface StartTemporalOptions {
  /** Where the dev server writes its log (`temporal-server.log`); default the data folder. The stack's logs stay in `<directory>/stack/logs`. */
  logDirectory?: string;
}

/** Starts one Temporal of `kind` with its data in `directory`. */
export async function startTemporal(
  kind: TemporalKind,
  directory: string,
  options: StartTemporalOptions = {},
): Promise<TemporalUnderTest> {
  if (kind === 'dev') {
    const server = await DevServer.start({
      port: 0,
      uiPort: false,
      databaseFile: join(directory, 'temporal.sqlite'),
      ...(options.logDirectory ? { logFile: join(options.logDirectory, 'temporal-server.log') } : {}),
    });
    return {
      kind,
      address: server.address,
      metricsUrl: server.metricsUrl,
      processGroups: async () => ({ Temporal: [server.pid] }),
      stop: () => server.stop(),
    };
  }
  const stack = await ProductionStack.open(join(directory, 'stack'), { freePorts: true });
  const onExit = () => stack.killAllNow();
  process.once('exit', onExit);
  try {
    await stack.up({ workers: { workflows: 0, model: 0, tools: 0 }, ui: false });
  } catch (error) {
    stack.killAllNow();
    throw error;
  }
  return {
    kind,
    address: stack.address,
    async processGroups() {
      const rows = await stack.status();
      const pids = (names: (name: string) => boolean) =>
        rows.filter((row) => names(row.name) && row.pid !== undefined).map((row) => row.pid as number);
      return {
        Temporal: pids((name) => name.startsWith('temporal-')),
        PostgreSQL: pids((name) => name === 'postgresql'),
      };
    },
    async stop() {
      await stack.down();
      process.removeListener('exit', onExit);
    },
  };
}
