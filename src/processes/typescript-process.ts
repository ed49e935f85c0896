import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../config/project-root';

export { PROJECT_ROOT };

/** Node arguments that run a TypeScript entry file of this project through tsx. */
export function typescriptEntryArguments(entry: string): string[] {
  return ['--import', pathToFileURL(require.resolve('tsx')).href, resolve(PROJECT_ROOT, entry)];
}

/**
 * Node arguments that run an entry file of this project (e.g. `worker/main.ts`) the way this
 * process runs: its JavaScript compiled at install (`dist/worker/main.js`) when this code is the
 * compiled one (bin/react-agent.js chose it because it is newer than the sources), else the
 * TypeScript through tsx.
 */
export function projectEntryArguments(entry: string): string[] {
  const compiled = resolve(PROJECT_ROOT, 'dist', entry.replace(/\.ts$/, '.js'));
  return __filename.endsWith('.js') && existsSync(compiled) ? [compiled] : typescriptEntryArguments(entry);
}

/** Spawns `node` on a TypeScript entry file of this project (e.g. `worker/main.ts`). */
export function spawnTypescript(entry: string, options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, typescriptEntryArguments(entry), { cwd: PROJECT_ROOT, ...options });
}
