import { setTimeout as delay } from 'node:timers/promises';
import { logTail } from './log-tail';

/**
 * Waiting until something started answers: the dev server, SeaweedFS, a worker, each service of
 * the production stack. One loop for all of them ({@link waitUntilReady}), whose decisions —
 * when to probe again, when to give up, what the error says — are the pure functions
 * {@link nextReadinessStep} and {@link notReadyMessage}.
 */

/** The process that is to become ready: its exit ends the wait, and its last output goes into the error. */
export interface ReadinessProcess {
  /** How it ended (`exited with code 1`, `was killed by SIGKILL`, `exited`), or undefined while it runs. */
  exitReason(): string | undefined;
  /** Settles when it exits, so the wait ends at once rather than at the next probe. Default: none (its exit is noticed between probes). */
  exited?: Promise<unknown>;
  /** Where its stdout and stderr go; the error quotes the last lines. */
  logFile: string;
  /** The byte of {@link logFile} where this start's output begins (earlier starts' lines are not quoted). Default 0. */
  logOffset?: number;
}

export interface WaitUntilReadyOptions {
  /** What is waited for, as the error names it: `Temporal's history service`, `SeaweedFS at http://127.0.0.1:8333`. */
  what: string;
  /**
   * One look: undefined when ready, otherwise what is missing yet (the error's "last problem"); a
   * rejection counts as a problem (its message). It is given the milliseconds left until the
   * deadline (at least 1), to bound its own calls.
   */
  probe: (remainingMs: number) => Promise<string | undefined>;
  /** How long to wait before giving up, in milliseconds (0: one probe). */
  timeoutMs: number;
  /** The pause between two probes, in milliseconds. Default 200. */
  intervalMs?: number;
  /** The process that is to become ready: the wait ends when it exits, and the error quotes its last output. Default: none. */
  process?: ReadinessProcess;
  /** Said after the problem in the error: where to look, what to try (`see the logs in …`). Default: nothing. */
  hint?: string;
  /** Lines of the process's output the error quotes. Default 25. */
  outputLines?: number;
}

/** Why a wait ended without readiness: the process exited (and how), or the time ran out. */
export type NotReadyCause = { kind: 'exited'; exit: string } | { kind: 'timed-out' };

/** What the wait does after a probe that found a problem. */
export type ReadinessStep = { kind: 'probe-again'; afterMs: number } | { kind: 'give-up'; cause: NotReadyCause };

/** Something did not become ready; the message names it, why, the last problem seen and the process's last output. */
export class NotReadyError extends Error {
  override readonly name = 'NotReadyError';
  constructor(
    message: string,
    /** What was waited for ({@link WaitUntilReadyOptions.what}). */
    readonly what: string,
    /** Why: the process exited, or the time ran out. */
    readonly reason: NotReadyCause,
    /** What the last probe found missing. */
    readonly lastProblem: string,
  ) {
    super(message);
  }
}

/** The milliseconds left until the deadline of a wait that began at `startedAt` (0 once it has passed). */
export function remainingMs(startedAt: number, now: number, timeoutMs: number): number {
  return Math.max(0, startedAt + timeoutMs - now);
}

/**
 * After a probe found a problem at `now`: give up when the process has exited (`exit` says how)
 * or the deadline has passed, else probe again after `intervalMs` — or sooner, at the deadline,
 * so the last probe is made then rather than an interval past it.
 */
export function nextReadinessStep(state: {
  startedAt: number;
  now: number;
  timeoutMs: number;
  intervalMs: number;
  exit?: string | undefined;
}): ReadinessStep {
  if (state.exit !== undefined) return { kind: 'give-up', cause: { kind: 'exited', exit: state.exit } };
  const left = remainingMs(state.startedAt, state.now, state.timeoutMs);
  if (left <= 0) return { kind: 'give-up', cause: { kind: 'timed-out' } };
  return { kind: 'probe-again', afterMs: Math.min(state.intervalMs, left) };
}

/** `90 s` for whole seconds, else `1500 ms`. */
export function formatWait(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * The error of a wait that ended without readiness: `<what> exited with code 1 while starting` or
 * `<what> did not become ready within 90 s`, then the last problem, the hint, and the last lines
 * of the process's output when there is a process.
 */
export function notReadyMessage(report: {
  what: string;
  cause: NotReadyCause;
  timeoutMs: number;
  lastProblem: string;
  hint?: string | undefined;
  output?: { logFile: string; lastLines: string } | undefined;
}): string {
  const what =
    report.cause.kind === 'exited'
      ? `${report.what} ${report.cause.exit} while starting`
      : `${report.what} did not become ready within ${formatWait(report.timeoutMs)}`;
  const hint = report.hint === undefined ? '' : `; ${report.hint}`;
  const output =
    report.output === undefined ? '' : ` Last lines of ${report.output.logFile}:\n${report.output.lastLines}`;
  return `${what} (last problem: ${report.lastProblem})${hint}.${output}`;
}

const EXITED: unique symbol = Symbol('exited');

/** `work`, or {@link EXITED} as soon as the process exits (when it says when). */
function untilExit<T>(work: Promise<T>, process: ReadinessProcess | undefined): Promise<T | typeof EXITED> {
  if (process?.exited === undefined) return work;
  return Promise.race([work, process.exited.then((): typeof EXITED => EXITED)]);
}

async function look(probe: WaitUntilReadyOptions['probe'], remaining: number): Promise<string | undefined> {
  try {
    return await probe(Math.max(1, remaining));
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Probes until `probe` finds nothing missing and resolves with the milliseconds that took; rejects
 * with a {@link NotReadyError} when `process` exits first or `timeoutMs` passes.
 */
export async function waitUntilReady(options: WaitUntilReadyOptions): Promise<number> {
  const { what, probe, timeoutMs, process, hint } = options;
  const intervalMs = options.intervalMs ?? 200;
  const startedAt = Date.now();
  let lastProblem = 'no answer yet';
  for (;;) {
    const problem = await untilExit(look(probe, remainingMs(startedAt, Date.now(), timeoutMs)), process);
    if (problem === undefined) return Date.now() - startedAt;
    if (problem !== EXITED) lastProblem = problem;
    const exit = process?.exitReason() ?? (problem === EXITED ? 'exited' : undefined);
    const step = nextReadinessStep({ startedAt, now: Date.now(), timeoutMs, intervalMs, exit });
    if (step.kind === 'give-up') {
      const output =
        process === undefined
          ? undefined
          : { logFile: process.logFile, lastLines: logTail(process.logFile, process.logOffset, options.outputLines) };
      const message = notReadyMessage({ what, cause: step.cause, timeoutMs, lastProblem, hint, output });
      throw new NotReadyError(message, what, step.cause, lastProblem);
    }
    await untilExit(delay(step.afterMs), process);
  }
}
