import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The folder holding package.json. */
export const PROJECT_ROOT = resolve(__dirname, '../..');

/** Node arguments that run a TypeScript entry file of this project through tsx. */
export function typescriptEntryArguments(entry: string): string[] {
  return ['--import', pathToFileURL(require.resolve('tsx')).href, resolve(PROJECT_ROOT, entry)];
}

/** Spawns `node` on a TypeScript entry file of this project (e.g. `worker/main.ts`). */
export function spawnTypescript(entry: string, options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, typescriptEntryArguments(entry), { cwd: PROJECT_ROOT, ...options });
}
