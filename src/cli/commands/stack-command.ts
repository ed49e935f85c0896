import { parseArgs } from 'node:util';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { MAX_MACHINES } from '../../processes/production-stack/machine-addresses';
import {
  defaultStackDirectory,
  ProductionStack,
  type StackProcessStatus,
  type WorkerRole,
} from '../../processes/production-stack/production-stack';
import { UsageError } from '../usage-error';

export const stackHelp = `Usage: react-agent stack up|down|status [--dir DIR] [--free-ports] [--workers workflows=N,model=N,tools=N]
                          [--machines N] [--no-ui]
       react-agent stack cut|restore MACHINE [--dir DIR]

The production stack on this machine (docs/production.md), from src/config/stack-topology.json:
PostgreSQL ${STACK_TOPOLOGY.postgresql.version} (its own cluster, run as the postgres user when root), Temporal's
frontend, history, matching and worker services as separate processes (built by
'npm run setup:temporal-server'), the namespace and search attributes, SeaweedFS (S3), the Web UI
when built, and agent workers by role. Its processes keep running after the command ends.

  up       start whatever is not running (a stopped or crashed service comes back); prints the
           variables that point the CLI at the stack
  status   each process, its pid and whether it answers, each worker's machine and each
           machine's link (exit 1 when something is down or cut off)
  down     stop everything, workers first and PostgreSQL last, and delete the machines' network
           namespaces; the data stays, and the next up makes the machines again
  cut      take a worker machine off the network (its link goes down; its workers keep running,
           cut off from Temporal, S3 and the model)
  restore  bring a cut machine's link back

  --dir DIR       the stack's folder: data, logs, pids (default ${defaultStackDirectory()};
                  REACT_AGENT_STACK_DIR)
  --free-ports    a new stack takes free loopback ports instead of the topology's (7233, 5432, ...)
  --workers LIST  worker processes per role (default: the topology's replicas)
  --machines N    run the workers on N worker machines (0-${MAX_MACHINES}; default: as at the last up, none at
                  first; 0 brings them back to the host). A machine is a network namespace with a
                  veth pair to the host, an address in 10.231.0.0/16 and a relay that forwards
                  Temporal's frontend, S3 and the loopback URLs of the workers' environment
                  (OPENAI_BASE_URL=http://127.0.0.1:...) across its link; the workers are dealt to
                  the machines in turn (machine-1 gets the first, machine-2 the second, ...), each
                  with its own data folder. Needs root and iproute2 ('ip').
  --no-ui         do not start the Web UI

Workers get this command's environment (OPENAI_BASE_URL, REACT_AGENT_MODEL, ...) plus the stack's:
TEMPORAL_ADDRESS, the queues, REACT_AGENT_WORKER_ROLE and the S3 transcript store.`;

/** What `react-agent stack` was asked to do. */
export interface StackCommandLine {
  action: 'up' | 'down' | 'status' | 'cut' | 'restore';
  /** The machine of `cut` and `restore`. */
  machine?: string;
  /** The stack's folder; default {@link defaultStackDirectory}. */
  directory?: string;
  /** A new stack takes free loopback ports (default false: the topology's). */
  freePorts: boolean;
  /** Worker processes per role; default as before (the topology's replicas at first). */
  workers?: Partial<Record<WorkerRole, number>>;
  /** Worker machines; default as before (none at first). */
  machines?: number;
  /** Start the Web UI (default true). */
  ui: boolean;
}

function parseWorkers(text: string): Partial<Record<WorkerRole, number>> {
  const counts: Partial<Record<WorkerRole, number>> = {};
  for (const part of text.split(',').filter(Boolean)) {
    const match = /^(workflows|model|tools)=(\d+)$/.exec(part.trim());
    if (!match)
      throw new UsageError(`--workers: "${part}" is not role=count (roles: workflows, model, tools)`, stackHelp);
    counts[match[1] as WorkerRole] = Number(match[2]);
  }
  return counts;
}

function parseMachines(text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) > MAX_MACHINES)
    throw new UsageError(`--machines: "${text}" is not a number of machines from 0 to ${MAX_MACHINES}`, stackHelp);
  return Number(text);
}

/** Reads the command line; a UsageError for anything it does not understand, before any folder is made. */
export function parseStackCommandLine(argumentsList: string[]): StackCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: argumentsList,
      allowPositionals: true,
      options: {
        dir: { type: 'string' },
        'free-ports': { type: 'boolean' },
        workers: { type: 'string' },
        machines: { type: 'string' },
        'no-ui': { type: 'boolean' },
      },
    });
  } catch (error) {
    // An unknown option, or one without its value (`--machines -1`), is a usage error like the others.
    if ((error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))
      throw new UsageError(`react-agent stack: ${(error as Error).message.split('\n')[0]}`, stackHelp);
    throw error;
  }
  const { values, positionals } = parsed;
  const action = positionals[0] as StackCommandLine['action'];
  const takesMachine = action === 'cut' || action === 'restore';
  if (!['up', 'down', 'status', 'cut', 'restore'].includes(action) || positionals.length !== (takesMachine ? 2 : 1))
    throw new UsageError(
      takesMachine
        ? `react-agent stack ${action}: say which machine (machine-1, machine-2, ...)`
        : 'react-agent stack: say up, down, status, cut MACHINE or restore MACHINE',
      stackHelp,
    );
  return {
    action,
    ...(takesMachine ? { machine: positionals[1] as string } : {}),
    ...(values.dir !== undefined ? { directory: values.dir } : {}),
    freePorts: values['free-ports'] === true,
    ...(values.workers !== undefined ? { workers: parseWorkers(values.workers) } : {}),
    ...(values.machines !== undefined ? { machines: parseMachines(values.machines) } : {}),
    ui: values['no-ui'] !== true,
  };
}

function formatStatus(rows: StackProcessStatus[]): string {
  const table = [
    ['process', 'pid', 'health', 'address'],
    ...rows.map((row) => [row.name, row.pid ? String(row.pid) : '-', row.health, row.address ?? '']),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  return table
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function stackCommand(argumentsList: string[]): Promise<number> {
  // The whole command line is checked before the stack's folder is opened (or created).
  const commandLine = parseStackCommandLine(argumentsList);
  const stack = await ProductionStack.open(commandLine.directory ?? defaultStackDirectory(), {
    freePorts: commandLine.freePorts,
  });
  const log = (line: string) => console.error(line);
  switch (commandLine.action) {
    case 'up': {
      const started = Date.now();
      await stack.up({
        ...(commandLine.workers ? { workers: commandLine.workers } : {}),
        ...(commandLine.machines !== undefined ? { machines: commandLine.machines } : {}),
        ui: commandLine.ui,
        log,
      });
      log(`Stack up in ${((Date.now() - started) / 1000).toFixed(1)} s (${stack.directory}). To use it:`);
      const variables = stack.clientEnvironment();
      console.log(
        Object.entries(variables)
          .map(([name, value]) => `export ${name}=${value}`)
          .join('\n'),
      );
      return 0;
    }
    case 'down':
      await stack.down(log);
      log(`Stack stopped; data kept in ${stack.directory}.`);
      return 0;
    case 'cut':
      stack.cutMachine(commandLine.machine as string);
      log(
        `${commandLine.machine}: link down (its workers are cut off; 'react-agent stack restore ${commandLine.machine}' brings it back).`,
      );
      return 0;
    case 'restore':
      stack.restoreMachine(commandLine.machine as string);
      log(`${commandLine.machine}: link up.`);
      return 0;
    case 'status': {
      const rows = await stack.status();
      console.log(formatStatus(rows));
      return rows.every((row) => row.health === 'ready' || row.health === 'running') ? 0 : 1;
    }
  }
}
