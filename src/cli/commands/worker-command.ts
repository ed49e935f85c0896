import { constants } from 'node:os';
import { OwnedProcess } from '../../processes/owned-process';
import { StopRequests } from '../stop-signals';
import { projectEntryArguments } from '../../processes/typescript-process';
import { workerProcessEnvironment } from '../../processes/worker-process-environment';
import { UsageError } from '../usage-error';

export const workerHelp = `Usage: react-agent worker

Runs a worker in the foreground until Ctrl-C: it polls the task queue(s) of its role and runs
the workflows, the model calls and the tools (configuration from the environment, see
docs/configuration.md: REACT_AGENT_TASK_QUEUE, REACT_AGENT_WORKER_ROLE, OPENAI_BASE_URL, ...).
The same as 'npm run worker'. It runs the JavaScript and the workflow bundle built at install
('npm run build' rebuilds them). Ctrl-C (or SIGTERM) stops it gracefully: polling stops and
running activities get REACT_AGENT_SHUTDOWN_GRACE_SECONDS; a second Ctrl-C stops it at once.`;

/**
 * Runs worker/main.ts (compiled, or through tsx from a checkout) as a child process: src/cli does
 * not import worker/. The child has a process group of its own, so a terminal's Ctrl-C reaches only
 * this process, which passes each stop request on once (the worker takes a second signal as "stop
 * now"); the child never outlives this process (see OwnedProcess).
 */
export async function workerCommand(argumentsList: string[]): Promise<number> {
  if (argumentsList.length > 0)
    throw new UsageError(
      `react-agent worker takes no arguments (got ${argumentsList.join(' ')}); it is configured by environment variables.`,
      workerHelp,
    );
  const worker = OwnedProcess.spawn(process.execPath, projectEntryArguments('worker/main.ts'), {
    stdio: 'inherit',
    env: workerProcessEnvironment(process.env),
  });
  const stops = new StopRequests((requests) =>
    requests === 1 ? worker.signal('SIGTERM') : worker.signalGroup('SIGKILL'),
  ).install();
  try {
    const { code, signal, error } = await worker.exited;
    if (error) throw new Error(`could not start the worker: ${error.message}`);
    return code ?? 128 + (signal ? constants.signals[signal] : 0);
  } finally {
    stops.dispose();
  }
}
