import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../config/project-root';

export { PROJECT_ROOT };

/** Where a `temporal` binary was found. */
export interface ResolvedTemporalCli {
  /** Absolute path of the executable. */
  path: string;
  /** `TEMPORAL_CLI` (environment variable), `PATH` (a `temporal` on PATH) or `project` (`.tools/temporal-venv`). */
  source: 'TEMPORAL_CLI' | 'PATH' | 'project';
}

/** No usable `temporal` CLI; the message says how to get one. */
export class TemporalCliNotFoundError extends Error {
  override readonly name = 'TemporalCliNotFoundError';
}

const IS_WINDOWS = process.platform === 'win32';

/** The project-local binary installed by `npm run setup` (scripts/setup-temporal-cli.mjs). */
export function projectLocalTemporalCli(projectRoot: string = PROJECT_ROOT): string {
  return IS_WINDOWS
    ? join(projectRoot, '.tools', 'temporal-venv', 'Scripts', 'temporal.exe')
    : join(projectRoot, '.tools', 'temporal-venv', 'bin', 'temporal');
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, IS_WINDOWS ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(environment: Readonly<Record<string, string | undefined>>): string | undefined {
  const directories = (environment['PATH'] ?? environment['Path'] ?? '')
    .split(delimiter)
    .filter((entry) => entry !== '');
  const names = IS_WINDOWS
    ? (environment['PATHEXT'] ?? '.EXE;.CMD;.BAT').split(';').map((extension) => `temporal${extension.toLowerCase()}`)
    : ['temporal'];
  for (const directory of directories) {
    for (const name of names) {
      const candidate = resolve(directory, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Finds the `temporal` CLI (dev server + Web UI) in this order: `TEMPORAL_CLI`, `temporal` on
 * `PATH`, then the project-local `.tools/temporal-venv/bin/temporal` that `npm run setup` installs.
 * Only looks at the file system; runs nothing.
 *
 * @param environment Variables to read (`TEMPORAL_CLI`, `PATH`); default `process.env`.
 * @param projectRoot Folder with package.json; default the root of this project.
 * @throws TemporalCliNotFoundError when `TEMPORAL_CLI` is set but not an executable file, or nothing is found.
 */
export function resolveTemporalCli(
  environment: Readonly<Record<string, string | undefined>> = process.env,
  projectRoot: string = PROJECT_ROOT,
): ResolvedTemporalCli {
  const fromEnvironment = environment['TEMPORAL_CLI']?.trim();
  if (fromEnvironment) {
    const path = isAbsolute(fromEnvironment) ? fromEnvironment : resolve(fromEnvironment);
    if (!isExecutableFile(path)) {
      throw new TemporalCliNotFoundError(
        `TEMPORAL_CLI=${fromEnvironment} is not an executable file. ` +
          "Fix: point TEMPORAL_CLI at a temporal binary, or unset it and run 'npm run setup' to install the CLI into .tools/temporal-venv.",
      );
    }
    return { path, source: 'TEMPORAL_CLI' };
  }
  const onPath = findOnPath(environment);
  if (onPath !== undefined) return { path: onPath, source: 'PATH' };
  const local = projectLocalTemporalCli(projectRoot);
  if (isExecutableFile(local)) return { path: local, source: 'project' };
  throw new TemporalCliNotFoundError(
    `The temporal CLI was not found: TEMPORAL_CLI is not set, there is no 'temporal' on PATH, and ${local} does not exist. ` +
      "Fix: run 'npm run setup' in " +
      projectRoot +
      ' (installs it into .tools/temporal-venv; needs python3 with venv), or install the Temporal CLI yourself and set TEMPORAL_CLI to its path.',
  );
}
