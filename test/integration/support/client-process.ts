import { spawn } from 'node:child_process';

/** How a client process ended, with everything it printed. */
export interface ClientOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a client program (a sample, the temporal CLI) to its end, collecting its output; SIGKILLed
 * after `timeoutMs`. The client tests drive runs through these as a user would from a shell.
 */
export function runClient(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number },
): Promise<ClientOutcome> {
  return new Promise((resolveOutcome, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveOutcome({ code, stdout, stderr, timedOut });
    });
  });
}
