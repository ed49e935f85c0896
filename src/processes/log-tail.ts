import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** How much of the end of a log is read for its last lines. */
const TAIL_BYTES = 64 * 1024;
/** A longer line (a stack trace on one line, a JSON dump) is cut here. */
const MAX_LINE_LENGTH = 600;

/** The last `maxLines` non-empty lines of `text`, each cut at 600 characters; `(the log is empty)` when there are none. */
export function lastLines(text: string, maxLines: number): string {
  const lines = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .slice(-maxLines)
    .map((line) => (line.length > MAX_LINE_LENGTH ? `${line.slice(0, MAX_LINE_LENGTH)}…` : line));
  return lines.length === 0 ? '(the log is empty)' : lines.join('\n');
}

/** The size of `file` in bytes (0 when there is none yet): where the output of a process started now begins. */
export function logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** What was written to `file` at or after byte `fromOffset`: the last `maxBytes` of it (default 64 KiB) at most. */
export function logSince(file: string, fromOffset = 0, maxBytes = TAIL_BYTES): string {
  const size = logSize(file);
  const start = Math.max(fromOffset, size - maxBytes);
  const length = size - start;
  if (length <= 0) return '';
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, start);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** The last `maxLines` non-empty lines written to `file` at or after byte `fromOffset`, or why they could not be read. */
export function logTail(file: string, fromOffset = 0, maxLines = 25): string {
  try {
    return lastLines(logSince(file, fromOffset), maxLines);
  } catch (error) {
    return `(could not read the log: ${error instanceof Error ? error.message : String(error)})`;
  }
}

/** What was written to `file` at or after byte `fromOffset` (its last 64 KiB), or `''` when it cannot be read. */
export function logTextSince(file: string, fromOffset = 0): string {
  try {
    return logSince(file, fromOffset);
  } catch {
    return '';
  }
}
