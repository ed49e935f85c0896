import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT, typescriptEntryArguments } from '../../../src/processes/typescript-process';
import { workerProcessEnvironment } from '../../../src/processes/worker-process-environment';

const { compiledIsCurrent } = require('../../../bin/compiled-build.js') as { compiledIsCurrent: () => boolean };

/**
 * How a test's worker process is started: the worker compiled by `npm run build`
 * (dist/worker/main.js) when that build is current — started after the last change to src/,
 * workflows/, activities/ and worker/, the rule bin/react-agent.js follows for the CLI the tests
 * run — else worker/main.ts through tsx. The compiled worker starts about 2 s sooner on 2 busy
 * cores (tsx compiles every module at each start); it runs the same code, and a stale build is
 * never used. Decided once per test file.
 */
let workerArguments: string[] | undefined;
function workerEntryArguments(): string[] {
  workerArguments ??= compiledIsCurrent()
    ? [join(PROJECT_ROOT, 'dist', 'worker', 'main.js')]
    : typescriptEntryArguments('worker/main.ts');
  return workerArguments;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A real worker (`worker/main.ts`, compiled when the build is current) in its own process, as production runs it. */
export class WorkerProcess {
  private output = '';
  private exitPromise: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    running.add(child);
    child.stdout?.on('data', (data: Buffer) => (this.output += data.toString()));
    child.stderr?.on('data', (data: Buffer) => (this.output += data.toString()));
    this.exitPromise = new Promise((resolve) =>
      child.once('exit', (code) => {
        running.delete(child);
        resolve(code);
      }),
    );
  }

  /** Starts a worker with `environment` added to this process's and resolves once it polls. */
  static async start(environment: Record<string, string>, timeoutMs = 60_000): Promise<WorkerProcess> {
    const child = spawn(process.execPath, workerEntryArguments(), {
      cwd: PROJECT_ROOT,
      // As every way the project starts a worker: its allocator's arenas and main thread's young generation bounded.
      env: workerProcessEnvironment({ ...process.env, ...environment }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child);
    const deadline = Date.now() + timeoutMs;
    while (!worker.output.includes('react-agent worker:')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        worker.kill('SIGKILL');
        throw new Error(`worker did not start:\n${worker.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get log(): string {
    return this.output;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** SIGKILL, as a crash would, and wait until the process is gone. */
  async crash(): Promise<void> {
    this.kill('SIGKILL');
    await this.exitPromise;
  }

  /** SIGTERM (graceful shutdown) and wait. */
  async stop(): Promise<number | null> {
    this.kill('SIGTERM');
    return this.exitPromise;
  }
}
