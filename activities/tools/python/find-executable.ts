import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** Where system tools (bwrap, unshare, setpriv, prlimit, ...) are looked for first. */
export const STANDARD_SYSTEM_DIRECTORIES: readonly string[] = [
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
];

/**
 * The standard system directories followed by those of a `PATH`-style string, without repeats.
 * System directories come first because the tools that run inside a sandbox (setpriv, prlimit,
 * env) must be under /usr or /bin to be visible there.
 */
export function systemToolDirectoriesFrom(pathVariable: string | undefined): string[] {
  const fromPath = (pathVariable ?? '').split(delimiter).filter((directory) => isAbsolute(directory));
  return [...new Set([...STANDARD_SYSTEM_DIRECTORIES, ...fromPath])];
}

/**
 * The absolute path of the executable file `name` in the first of `directories` that has one,
 * or `undefined`. An absolute `name` is returned as is when it is an executable file.
 */
export function findExecutable(name: string, directories: readonly string[]): string | undefined {
  const candidates = isAbsolute(name) ? [name] : directories.map((directory) => join(directory, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
