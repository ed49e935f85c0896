/**
 * The CLI's standard output and error: what happens when they go away, and exiting without
 * losing what was written to them.
 */

const streams = () => [process.stdout, process.stderr];

let outputErrorsIgnored = false;

/**
 * Keeps the command going when its output goes away (a pipe closed early, as with `| head`; a
 * closed terminal): write errors on stdout and stderr are dropped instead of crashing the command
 * half-way, which would stop the worker and dev server `run` started while its run goes on.
 */
export function ignoreOutputErrors(): void {
  if (outputErrorsIgnored) return;
  outputErrorsIgnored = true;
  for (const stream of streams()) stream.on('error', () => undefined);
}

/** `text` ending in exactly one newline. */
export function withFinalNewline(text: string): string {
  return `${text.replace(/\n+$/, '')}\n`;
}

/** Prints help or usage text on stdout, ending in a newline. */
export function printText(text: string): void {
  process.stdout.write(withFinalNewline(text));
}

/**
 * Exits with `code` once everything written to stdout and stderr has been handed to the
 * operating system. `process.exit` alone drops what a pipe has not taken yet: past its 64 KiB
 * buffer, a slow reader (`| less`, `| jq` on a busy machine) gets a cut-off result.
 */
export function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  const flushed = () =>
    streams().every((stream) => stream.destroyed || !stream.writable || stream.writableLength === 0);
  const exitOrWait = () => {
    if (flushed()) process.exit(code);
    else setTimeout(exitOrWait, 10);
  };
  exitOrWait();
}
