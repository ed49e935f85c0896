import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A peer's Temporal worker (benchmarks/peers/*_worker.py) in its own process, started with the
 * peers' venv python and only the environment it needs; ready once it prints `ready`.
 */
export class PythonWorker {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    running.add(child);
    child.stdout?.on('data', (data: Buffer) => (this.output = (this.output + data.toString()).slice(-20_000)));
    child.stderr?.on('data', (data: Buffer) => (this.output = (this.output + data.toString()).slice(-20_000)));
    child.once('exit', () => running.delete(child));
  }

  /** Starts `script` (a file in benchmarks/peers/) and resolves once its worker polls. */
  static async start(
    python: string,
    script: string,
    environment: Record<string, string>,
    timeoutMs = 180_000,
  ): Promise<PythonWorker> {
    const child = spawn(python, ['-u', script], {
      cwd: resolve(__dirname),
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        PYTHONDONTWRITEBYTECODE: '1',
        ...environment,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new PythonWorker(child);
    const deadline = Date.now() + timeoutMs;
    while (!/^ready$/m.test(worker.output)) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${script} did not start:\n${worker.output}`);
      }
      await new Promise((done) => setTimeout(done, 100));
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** What it printed (the last 20,000 characters). */
  get log(): string {
    return this.output;
  }

  /** SIGTERM, then SIGKILL after 10 s; resolves when it has exited. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
