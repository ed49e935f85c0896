#!/usr/bin/env node
// Makes sure a compose implementation is available to validate docker-compose.yml without a
// Docker engine (`npm run validate:compose`), the way scripts/setup-seaweedfs.mjs installs weed.
//
// Order: $DOCKER_COMPOSE, then the project-local copy under .tools/compose-venv, which this script
// installs from PyPI's `docker-compose` (pinned 1.29.2, the last Python release; its `config`
// command parses, interpolates and checks a file against the compose schema, no engine needed)
// when missing. docker-compose 1.29.2 needs PyYAML < 6, whose 5.4.1 sources no longer build under
// Cython 3, so PyYAML is built first with Cython < 3 and no build isolation. Idempotent: with
// everything in place it does nothing and prints the path. Runs as part of npm's postinstall.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DOCKER_COMPOSE_VERSION = '1.29.2';
const PYYAML_VERSION = '5.4.1';
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const venvDirectory = join(projectRoot, '.tools', 'compose-venv');
const localBinary = join(venvDirectory, 'bin', 'docker-compose');

function works(path) {
  const result = spawnSync(path, ['version', '--short'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function main() {
  const fromEnvironment = process.env.DOCKER_COMPOSE;
  if (fromEnvironment) {
    const version = works(fromEnvironment);
    if (!version) {
      console.error(
        `DOCKER_COMPOSE=${fromEnvironment} does not run ('${fromEnvironment} version' failed). Unset it or point it at a docker-compose binary.`,
      );
      process.exit(1);
    }
    console.log(`docker-compose: ${fromEnvironment} (${version}, from DOCKER_COMPOSE)`);
    return;
  }
  if (existsSync(localBinary) && works(localBinary)) {
    console.log(`docker-compose: ${localBinary} (project-local)`);
    return;
  }
  console.log(
    `Installing docker-compose (PyPI docker-compose==${DOCKER_COMPOSE_VERSION}, to validate docker-compose.yml) into ${venvDirectory} ...`,
  );
  const pip = join(venvDirectory, 'bin', 'pip');
  const quiet = ['--quiet', '--disable-pip-version-check'];
  try {
    execFileSync('python3', ['-m', 'venv', venvDirectory], { stdio: 'inherit' });
    execFileSync(pip, ['install', ...quiet, 'cython<3', 'wheel', 'setuptools'], { stdio: 'inherit' });
    execFileSync(pip, ['install', ...quiet, '--no-build-isolation', `pyyaml==${PYYAML_VERSION}`], { stdio: 'inherit' });
    execFileSync(pip, ['install', ...quiet, `docker-compose==${DOCKER_COMPOSE_VERSION}`], { stdio: 'inherit' });
  } catch (error) {
    console.error(
      `Could not install docker-compose: ${error.message}\n` +
        'It validates docker-compose.yml in the tests (npm run validate:compose). Fix: install python3 with venv, pip and a C compiler ' +
        "(Debian: apt-get install python3-venv build-essential), or set DOCKER_COMPOSE to a docker-compose binary, then run 'npm run setup'.",
    );
    process.exit(1);
  }
  const version = works(localBinary);
  if (!version) {
    console.error(`docker-compose was installed at ${localBinary} but does not run.`);
    process.exit(1);
  }
  console.log(`docker-compose: ${localBinary} (${version}, installed)`);
}

main();
