import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The folder holding package.json, found upwards from `from`: the same folder whether the code
 * runs from the TypeScript sources (`<root>/src/...`) or compiled (`<root>/dist/src/...`).
 */
export function projectRootFrom(from: string): string {
  for (let directory = from; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) throw new Error(`no package.json in ${from} or above it`);
  }
}

/** The project's folder (the one holding package.json). */
export const PROJECT_ROOT = projectRootFrom(__dirname);
