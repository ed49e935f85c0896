/**
 * The worker's log lines without its secrets (issue 28, row 6): whatever is written to stdout or
 * stderr — its own lines, the Temporal SDK's logger, a tool's `console.log`, an error printed at
 * exit — goes through the worker's {@link SecretRedactor} first.
 */
import type { SecretRedactor } from '../src/domain/secret-redaction';

/** Makes every write to `process.stdout` and `process.stderr` redact with `redactor()` (read at each write). */
export function redactProcessOutput(redactor: () => SecretRedactor): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    const redacting = (chunk: unknown, ...rest: unknown[]): boolean => {
      if (typeof chunk === 'string') return write(redactor().redact(chunk), ...rest);
      if (chunk instanceof Uint8Array)
        return write(Buffer.from(redactor().redact(Buffer.from(chunk).toString('utf8')), 'utf8'), ...rest);
      return write(chunk, ...rest);
    };
    stream.write = redacting as typeof stream.write;
  }
}
