import { parseArgs } from 'node:util';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { defaultStackDirectory, ProductionStack, type StackProcessStatus, type WorkerRole } from '../../processes/production-stack/production-stack';
import { UsageError } from '../usage-error';

export const stackHelp = `Usage: react-agent stack up|down|status [--dir DIR] [--free-ports] [--workers workflows=N,model=N,tools=N] [--no-ui]

The production stack on this machine (docs/production.md), from src/config/stack-topology.json:
PostgreSQL ${STACK_TOPOLOGY.postgresql.version} (its own cluster, run as the postgres user when root), Temporal's
frontend, history, matching and worker services as separate processes (built by
'npm run setup:temporal-server'), the namespace and search attributes, SeaweedFS (S3), the Web UI
when built, and agent workers by role. Its processes keep running after the command ends.

  up       start whatever is not running (a stopped or crashed service comes back); prints the
           variables that point the CLI at the stack
  status   each process, its pid and whether it answers (exit 1 when something is down)
  down     stop everything, workers first and PostgreSQL last; the data stays

  --dir DIR       the stack's folder: data, logs, pids (default ${defaultStackDirectory()};
                  REACT_AGENT_STACK_DIR)
  --free-ports    a new stack takes free loopback ports instead of the topology's (7233, 5432, ...)
  --workers LIST  worker processes per role (default: the topology's replicas)
  --no-ui         do not start the Web UI

Workers get this command's environment (OPENAI_BASE_URL, REACT_AGENT_MODEL, ...) plus the stack's:
TEMPORAL_ADDRESS, the queues, REACT_AGENT_WORKER_ROLE and the S3 transcript store.`;

function parseWorkers(text: string): Partial<Record<WorkerRole, number>> {
  const counts: Partial<Record<WorkerRole, number>> = {};
  for (const part of text.split(',').filter(Boolean)) {
    const match = /^(workflows|model|tools)=(\d+)$/.exec(part.trim());
    if (!match) throw new UsageError(`--workers: "${part}" is not role=count (roles: workflows, model, tools)`, stackHelp);
    counts[match[1] as WorkerRole] = Number(match[2]);
  }
  return counts;
}

function formatStatus(rows: StackProcessStatus[]): string {
  const table = [['process', 'pid', 'health', 'address'], ...rows.map((row) => [row.name, row.pid ? String(row.pid) : '-', row.health, row.address ?? ''])];
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
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { dir: { type: 'string' }, 'free-ports': { type: 'boolean' }, workers: { type: 'string' }, 'no-ui': { type: 'boolean' } },
  });
  const action = positionals[0];
  if (positionals.length !== 1 || !['up', 'down', 'status'].includes(action as string)) throw new UsageError('react-agent stack: say up, down or status', stackHelp);
  // The whole command line is checked before the stack's folder is opened (or created).
  const workers = values.workers ? parseWorkers(values.workers) : undefined;
  const stack = await ProductionStack.open(values.dir ?? defaultStackDirectory(), { freePorts: values['free-ports'] === true });
  const log = (line: string) => console.error(line);
  if (action === 'up') {
    const started = Date.now();
    await stack.up({ ...(workers ? { workers } : {}), ui: values['no-ui'] !== true, log });
    log(`Stack up in ${((Date.now() - started) / 1000).toFixed(1)} s (${stack.directory}). To use it:`);
    const variables = stack.clientEnvironment();
    console.log(
      Object.entries(variables)
        .map(([name, value]) => `export ${name}=${value}`)
        .join('\n'),
    );
    return 0;
  }
  if (action === 'down') {
    await stack.down(log);
    log(`Stack stopped; data kept in ${stack.directory}.`);
    return 0;
  }
  const rows = await stack.status();
  console.log(formatStatus(rows));
  return rows.every((row) => row.health === 'ready' || row.health === 'running') ? 0 : 1;
}
