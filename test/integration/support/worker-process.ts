import type { ChildProcess } from 'node:child_process';
import { spawnTypescript } from '../../../src/processes/typescript-process';

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A real worker (`worker/main.ts`) in its own process, as production runs it. */
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
    const child = spawnTypescript('worker/main.ts', {
      env: { ...process.env, ...environment },
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
