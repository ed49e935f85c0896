import { spawn } from 'node:child_process';
import { measureDirectories } from './directory-usage';

/** A process to run with a wall-clock limit, capped output and cancellation. */
export interface LimitedProcessRequest {
  command: string;
  args: readonly string[];
  /** The complete environment (nothing is inherited). */
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** Start the process as this user and group (the caller must be root). */
  uid?: number;
  gid?: number;
  /** The whole process group is killed after this long. */
  wallTimeMilliseconds: number;
  /** Per stream; past it the whole process group is killed and the output cut there. */
  maxOutputBytes: number;
  /** Aborting kills the whole process group; the promise then rejects with the signal's reason once it is gone. */
  signal?: AbortSignal;
  /**
   * Measure these directories every `everyMilliseconds` and kill the whole process group once
   * the files in them take more than `maxBytes` on disk, or number more than `maxEntries`.
   */
  writeQuota?: { directories: readonly string[]; maxBytes: number; maxEntries: number; everyMilliseconds: number };
}

/** How a limited process ended. */
export interface LimitedProcessResult {
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Exit code, or null when killed by a signal. */
  exitCode: number | null;
  /** The signal that killed the process (as Node saw it), or null. */
  signal: NodeJS.Signals | null;
  /** Set when we killed the process: the wall-clock limit, an output stream over its cap, or the write quota. */
  stoppedBecause: 'wall-time' | 'output-limit' | 'write-quota' | undefined;
  durationMilliseconds: number;
}

/** After the process exits, how long its pipes may stay open (held by leftover children) before we stop reading. */
const PIPE_GRACE_MS = 500;

/** Collects a stream's bytes up to a cap. */
class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  /** Adds a chunk; returns false once the cap is exceeded (only the bytes up to the cap are kept). */
  append(chunk: Buffer): boolean {
    if (this.truncated) return false;
    const room = this.maxBytes - this.bytes;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.bytes = this.maxBytes;
      this.truncated = true;
      return false;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    return true;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Runs a process in its own process group and resolves when it has ended. A non-zero exit or a
 * signal is a result, not an error; the promise rejects only when the process cannot be started
 * or `signal` aborts. Every way out (timeout, output overflow, abort) kills the whole process
 * group with SIGKILL and waits for the process to be gone.
 */
export function runLimitedProcess(request: LimitedProcessRequest): Promise<LimitedProcessResult> {
  const { signal } = request;
  if (signal?.aborted) return Promise.reject(abortReason(signal));

  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const stdout = new CappedOutput(request.maxOutputBytes);
    const stderr = new CappedOutput(request.maxOutputBytes);
    let stoppedBecause: LimitedProcessResult['stoppedBecause'];
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;

    const child = spawn(request.command, request.args, {
      cwd: request.cwd,
      env: { ...request.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(request.uid === undefined ? {} : { uid: request.uid, gid: request.gid }),
    });

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
      if (exit === undefined) child.kill('SIGKILL');
    };
    const stop = (reason: NonNullable<LimitedProcessResult['stoppedBecause']>) => {
      stoppedBecause ??= reason;
      killGroup();
    };
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    const wallTimer = setTimeout(() => stop('wall-time'), request.wallTimeMilliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
    let quotaTimer: NodeJS.Timeout | undefined;
    const quota = request.writeQuota;
    const checkQuota = async () => {
      if (!quota || settled || exit !== undefined) return;
      const usage = await measureDirectories(quota.directories, quota.maxEntries);
      if (usage.bytes > quota.maxBytes || usage.cut) stop('write-quota');
      else if (!settled && exit === undefined)
        quotaTimer = setTimeout(() => void checkQuota(), quota.everyMilliseconds);
    };
    if (quota) quotaTimer = setTimeout(() => void checkQuota(), quota.everyMilliseconds);

    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(wallTimer);
      clearTimeout(graceTimer);
      clearTimeout(quotaTimer);
      signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (error) return reject(error);
      if (aborted && signal) return reject(abortReason(signal));
      resolve({
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stoppedBecause,
        durationMilliseconds: performance.now() - startedAt,
      });
    };

    child.stdout?.on('data', (chunk: Buffer) => {
      if (!stdout.append(chunk)) stop('output-limit');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (!stderr.append(chunk)) stop('output-limit');
    });
    child.on('error', (error) => {
      // Only a failure to start (kill errors are swallowed above).
      if (exit === undefined) finish(error);
    });
    child.on('exit', (code, exitSignal) => {
      exit = { code, signal: exitSignal };
      // Anything the program left in its process group goes too.
      killGroup();
      graceTimer = setTimeout(() => finish(), PIPE_GRACE_MS);
    });
    child.on('close', () => finish());
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'The python call was cancelled.');
  error.name = 'AbortError';
  return error;
}
