import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The peers' Python: a virtual environment with benchmarks/peers/requirements.txt installed, made
 * once and kept in the user's cache directory (scripts/cached-tools.mjs: $REACT_AGENT_CACHE_DIR,
 * else $XDG_CACHE_HOME/react-agent, else ~/.cache/react-agent) under `peers/py<version>-<key>`,
 * keyed by the requirements, the python3 version and the platform, behind the same cache lock
 * the setup scripts take, so two benchmarks on one machine do not install into it at once.
 */

const requirementsFile = resolve(__dirname, 'requirements.txt');
const INSTALLED_MARKER = '.react-agent-installed';
const IMPORTS_CHECK = 'import temporalio.openai_agents, agents, pydantic_ai.durable_exec.temporal';

/** The distributions whose versions the table prints. */
export const PEER_DISTRIBUTIONS = ['temporalio', 'temporalio-openai-agents', 'openai-agents', 'pydantic-ai-slim'];

/** The venv's python and the versions installed there. */
export interface PeerVenv {
  python: string;
  /** Distribution name → installed version. */
  versions: Record<string, string>;
}

interface CachedTools {
  cachedVenv(name: string, requirements: string): { venv: string; python: string } | undefined;
  withCacheLock<T>(name: string, action: () => T): T;
}

/** Makes (or finds) the venv; throws with the reason when it cannot (no python3 with venv, pip failed). */
export async function ensurePeerVenv(): Promise<PeerVenv> {
  const { cachedVenv, withCacheLock } = (await import(
    pathToFileURL(resolve(__dirname, '../../scripts/cached-tools.mjs')).href
  )) as CachedTools;
  const requirements = readFileSync(requirementsFile, 'utf8');
  const cached = cachedVenv('peers', requirements);
  if (!cached) throw new Error('python3 is not on PATH (Debian: apt-get install python3-venv).');
  const { venv, python } = cached;
  withCacheLock('peers-venv', () => {
    if (existsSync(join(venv, INSTALLED_MARKER)) && spawnSync(python, ['-c', IMPORTS_CHECK]).status === 0) return;
    console.log(`Installing the peers (benchmarks/peers/requirements.txt) into ${venv} ...`);
    rmSync(venv, { recursive: true, force: true });
    try {
      execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
      execFileSync(
        join(venv, 'bin', 'pip'),
        ['install', '--quiet', '--disable-pip-version-check', '-r', requirementsFile],
        { stdio: 'inherit' },
      );
      execFileSync(python, ['-c', IMPORTS_CHECK], { stdio: 'inherit' });
    } catch (error) {
      rmSync(venv, { recursive: true, force: true });
      throw new Error(`installing the peers into ${venv} failed: ${(error as Error).message}`);
    }
    writeFileSync(join(venv, INSTALLED_MARKER), requirements);
  });
  const versions = JSON.parse(
    execFileSync(
      python,
      [
        '-c',
        `import json, importlib.metadata as m; print(json.dumps({name: m.version(name) for name in ${JSON.stringify(PEER_DISTRIBUTIONS)}}))`,
      ],
      { encoding: 'utf8' },
    ),
  ) as Record<string, string>;
  return { python, versions };
}
