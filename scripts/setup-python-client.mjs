#!/usr/bin/env node
// Makes the Python client sample (samples/clients/python) runnable: a virtual environment with
// the pinned `temporalio` from samples/clients/python/requirements.txt.
//
// The venv lives in the user's cache directory ($REACT_AGENT_CACHE_DIR, else
// $XDG_CACHE_HOME/react-agent, else ~/.cache/react-agent), in a folder keyed by the requirements
// and the python3 version, so a second clone of the project reuses it; .tools/python-client-venv
// links to it, and the integration tests and samples/clients/README.md use that link. Idempotent:
// with the venv in place it does nothing and prints the path. Runs as part of npm's postinstall.
// When it cannot install (no python3 with venv, no wheel for this platform), it says why and
// writes the reason to .tools/python-client-venv.unavailable for the tests to report, but does not
// fail `npm ci`: the samples are documentation, not part of the agent.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedVenv, pointLinkAt, withCacheLock } from './cached-tools.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const requirementsFile = join(projectRoot, 'samples', 'clients', 'python', 'requirements.txt');
const link = join(projectRoot, '.tools', 'python-client-venv');
const unavailableFile = `${link}.unavailable`;
const INSTALLED_MARKER = '.react-agent-installed';

function unavailable(reason) {
  mkdirSync(dirname(link), { recursive: true });
  writeFileSync(unavailableFile, `${reason}\n`);
  console.error(`Python client sample: not installed. ${reason}`);
  process.exit(0);
}

function linkTo(target) {
  pointLinkAt(link, target);
  rmSync(unavailableFile, { force: true });
}

function main() {
  const requirements = readFileSync(requirementsFile, 'utf8');
  const cached = cachedVenv('python-client', requirements);
  if (!cached) {
    unavailable(
      "python3 is not on PATH. Fix: install python3 with venv (Debian: apt-get install python3-venv), then run 'npm run setup'.",
    );
  }
  const { venv, python: venvPython } = cached;
  if (
    existsSync(join(venv, INSTALLED_MARKER)) &&
    spawnSync(venvPython, ['-c', 'import temporalio.client'], { stdio: 'ignore' }).status === 0
  ) {
    linkTo(venv);
    console.log(`Python client sample: ${link} -> ${venv} (cached)`);
    return;
  }
  const pins = requirements
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .join(' ');
  console.log(`Installing the Python client sample's packages (${pins}) into ${venv} ...`);
  const started = Date.now();
  rmSync(venv, { recursive: true, force: true });
  try {
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(
      join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', '-r', requirementsFile],
      { stdio: 'inherit' },
    );
  } catch (error) {
    rmSync(venv, { recursive: true, force: true });
    unavailable(
      `Installing ${pins} failed: ${error.message}. Fix: install python3 with venv and pip (Debian: apt-get install python3-venv); ` +
        "temporalio needs Python 3.10 or later on a platform it has wheels for. Then run 'npm run setup'.",
    );
  }
  if (spawnSync(venvPython, ['-c', 'import temporalio.client'], { stdio: 'inherit' }).status !== 0) {
    unavailable(`${pins} was installed into ${venv} but 'import temporalio.client' fails there.`);
  }
  writeFileSync(join(venv, INSTALLED_MARKER), `${requirements}`);
  linkTo(venv);
  console.log(`Python client sample: ${link} -> ${venv} (installed in ${Math.round((Date.now() - started) / 1000)} s)`);
}

withCacheLock('python-client', main);
