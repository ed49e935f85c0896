import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';
import { PROJECT_ROOT } from './project-root';
import { DEFAULT_DATA_DIRECTORY } from './worker-config';

/**
 * Reads the folders a worker reads and writes for its clients, `REACT_AGENT_DATA_ROOTS`
 * (issue 28): every local path a client names in a workflow's input — an evaluation's inputs,
 * judge prompt file and output, a batch's output — must lie inside one of them
 * (`src/storage/data-roots.ts`). Comma-separated; a relative folder is resolved against the
 * current directory.
 *
 * Default: the data directory (`REACT_AGENT_DATA_DIR`, default `<projectRoot>/.data`) and the
 * project's folder, where the CLI and `npm run worker` start the worker, so `react-agent batch
 * … --output out/` run in the project keeps working.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming `REACT_AGENT_DATA_ROOTS` when it is set but names no folder.
 */
export function loadDataRoots(environment: Environment = process.env): string[] {
  const raw = readString(environment, 'REACT_AGENT_DATA_ROOTS');
  if (raw === undefined)
    return [
      ...new Set([resolve(readString(environment, 'REACT_AGENT_DATA_DIR') ?? DEFAULT_DATA_DIRECTORY), PROJECT_ROOT]),
    ];
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) {
    throw new ConfigurationError(
      'REACT_AGENT_DATA_ROOTS',
      `REACT_AGENT_DATA_ROOTS must list one or more folders separated by commas, got ${JSON.stringify(raw)}.`,
    );
  }
  return [...new Set(entries.map((entry) => (isAbsolute(entry) ? resolve(entry) : resolve(process.cwd(), entry))))];
}
