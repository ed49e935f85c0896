import { constants } from 'node:os';
import { writeQuotaEntries } from './resource-limits';
import type { LimitedProcessResult } from './run-limited-process';

/** The limits a call ran under, to explain why it stopped. */
export interface ObservationLimits {
  wallTimeSeconds: number;
  cpuSeconds: number;
  memoryBytes: number;
  maxFileBytes: number;
  maxOutputBytes: number;
  /** The bytes `/sandbox` and `/tmp` may hold together. */
  maxWriteBytes: number;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** The signal that ended the program: Node's, or one a launcher reported as exit code 128 + n. */
export function terminatingSignal(result: LimitedProcessResult, signalsAsExitCodes: boolean): NodeJS.Signals | null {
  if (result.signal) return result.signal;
  if (signalsAsExitCodes && result.exitCode !== null && result.exitCode > 128)
    return SIGNAL_NAMES.get(result.exitCode - 128) ?? null;
  return null;
}

/**
 * The observation the model reads: `[stdout]`, `[stderr]` and `[status]` sections. A failure of
 * the program (exception, limit, crash) is described here so the model can act on it.
 */
export function formatPythonObservation(
  result: LimitedProcessResult,
  limits: ObservationLimits,
  signalsAsExitCodes: boolean,
): string {
  const seconds = (result.durationMilliseconds / 1000).toFixed(2);
  const signal = terminatingSignal(result, signalsAsExitCodes);
  const succeeded = result.stoppedBecause === undefined && signal === null && result.exitCode === 0;
  const stdoutEmptyNote = succeeded ? '(empty: nothing was printed; use print() to see values)' : '(empty)';
  return [
    '[stdout]',
    section(result.stdout, result.stdoutTruncated, 'stdout', limits, stdoutEmptyNote),
    '[stderr]',
    section(result.stderr, result.stderrTruncated, 'stderr', limits, '(empty)'),
    '[status]',
    `${describeStatus(result, signal, limits)} Ran for ${seconds} s.`,
  ].join('\n');
}

function section(
  text: string,
  truncated: boolean,
  stream: string,
  limits: ObservationLimits,
  emptyNote: string,
): string {
  const body = text.replace(/\n$/, '');
  const cut = truncated
    ? `\n[${stream} cut at the limit of ${limits.maxOutputBytes.toLocaleString('en-US')} bytes; the program was stopped]`
    : '';
  return (body === '' ? emptyNote : body) + cut;
}

function describeStatus(
  result: LimitedProcessResult,
  signal: NodeJS.Signals | null,
  limits: ObservationLimits,
): string {
  if (result.stoppedBecause === 'wall-time')
    return `Stopped: the time limit of ${limits.wallTimeSeconds} s (wall clock) was reached and the program was killed.`;
  if (result.stoppedBecause === 'write-quota') {
    return `Stopped: the files written to the working directory and the temporary directory passed the write quota of ${formatGibibytes(limits.maxWriteBytes)} (or ${writeQuotaEntries(limits.maxWriteBytes).toLocaleString('en-US')} files) and the program was killed. Write less, or delete files you no longer need.`;
  }
  if (result.stoppedBecause === 'output-limit')
    return `Stopped: the output exceeded ${limits.maxOutputBytes.toLocaleString('en-US')} bytes and the program was killed. Print less (summaries, head of data).`;
  if (signal) {
    switch (signal) {
      case 'SIGXCPU':
        return `Killed by SIGXCPU: the CPU time limit of ${limits.cpuSeconds} s was reached.`;
      case 'SIGKILL':
        return `Killed by SIGKILL: the CPU time limit of ${limits.cpuSeconds} s was reached or memory ran out.`;
      case 'SIGXFSZ':
        return `Killed by SIGXFSZ: a file grew beyond the limit of ${limits.maxFileBytes.toLocaleString('en-US')} bytes.`;
      case 'SIGSEGV':
      case 'SIGBUS':
      case 'SIGABRT':
        return `Crashed with ${signal} (often native code running out of memory; the limit is ${formatGibibytes(limits.memoryBytes)} of address space).`;
      default:
        return `Killed by ${signal}.`;
    }
  }
  if (result.exitCode === 0) return 'Exit code 0 (success).';
  if (/No space left on device|Disk quota exceeded/.test(result.stderr)) {
    return `Exit code ${result.exitCode}: the write quota of ${formatGibibytes(limits.maxWriteBytes)} for /sandbox and /tmp is full (No space left on device). Write less, or delete files you no longer need.`;
  }
  if (/\bMemoryError\b/.test(result.stderr)) {
    return `Exit code ${result.exitCode}: out of memory (MemoryError); each process may use at most ${formatGibibytes(limits.memoryBytes)} of address space.`;
  }
  if (/^Traceback \(most recent call last\):|^\s*File ".*", line \d+|Error:/m.test(result.stderr)) {
    return `Exit code ${result.exitCode}: the code raised an error; see [stderr].`;
  }
  return `Exit code ${result.exitCode}.`;
}

function formatGibibytes(bytes: number): string {
  const gibibytes = bytes / 1024 ** 3;
  return gibibytes >= 1 ? `${Number(gibibytes.toFixed(2))} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
}
