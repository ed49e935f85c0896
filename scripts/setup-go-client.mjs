#!/usr/bin/env node
// Builds the Go client sample (samples/clients/go) so the integration tests run it without
// downloading or compiling anything.
//
// The binary is kept in the user's cache directory ($REACT_AGENT_CACHE_DIR, else
// $XDG_CACHE_HOME/react-agent, else ~/.cache/react-agent) under a key hashed from go.mod, go.sum,
// the .go sources, `go version` and the platform, so a second clone of the project (or a rerun)
// reuses it; .tools/go-client/research-client links to it. The build needs `go` and, the first
// time, the Go module proxy (modules are pinned by go.sum; -mod=readonly). Runs as part of npm's
// postinstall. When `go` is missing or the build fails, it says why and writes the reason to
// .tools/go-client/unavailable.txt, which the Go client's test reports when it fails; `npm ci`
// itself does not fail for it (the samples are documentation, not part of the agent).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDirectory, pointLinkAt, withCacheLock } from './cached-tools.mjs';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const sourceDirectory = join(projectRoot, 'samples', 'clients', 'go');
const toolsDirectory = join(projectRoot, '.tools', 'go-client');
const link = join(toolsDirectory, 'research-client');
const unavailableFile = join(toolsDirectory, 'unavailable.txt');

function unavailable(reason) {
  rmSync(link, { force: true });
  mkdirSync(toolsDirectory, { recursive: true });
  writeFileSync(unavailableFile, `${reason}\n`);
  console.error(`Go client sample: not built. ${reason}`);
  process.exit(0);
}

function linkTo(target) {
  pointLinkAt(link, target);
  rmSync(unavailableFile, { force: true });
}

function main() {
  const goVersion = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (goVersion.error || goVersion.status !== 0) {
    unavailable(
      "`go` is not on PATH (or does not run). Fix: install Go 1.26 or later (https://go.dev/doc/install, or Debian's golang package), then run 'npm run setup'.",
    );
  }
  const hash = createHash('sha256').update(`${goVersion.stdout.trim()}\n${process.platform}-${process.arch}\n`);
  const sources = readdirSync(sourceDirectory)
    .filter((name) => name === 'go.mod' || name === 'go.sum' || name.endsWith('.go'))
    .sort();
  for (const name of sources) hash.update(`${name}\n`).update(readFileSync(join(sourceDirectory, name)));
  const key = hash.digest('hex').slice(0, 16);
  const binary = join(cacheDirectory(), 'go-client', key, 'research-client');
  if (existsSync(binary)) {
    linkTo(binary);
    console.log(`Go client sample: ${link} -> ${binary} (cached)`);
    return;
  }
  console.log(`Building the Go client sample (${sources.join(', ')}) into ${binary} ...`);
  const started = Date.now();
  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  try {
    execFileSync('go', ['build', '-mod=readonly', '-trimpath', '-o', partial, '.'], {
      cwd: sourceDirectory,
      stdio: 'inherit',
    });
  } catch (error) {
    rmSync(partial, { force: true });
    unavailable(
      `'go build' in ${sourceDirectory} failed: ${error.message}. It downloads go.temporal.io/sdk through the Go module proxy the first time. Fix the cause above, then run 'npm run setup'.`,
    );
  }
  renameSync(partial, binary);
  linkTo(binary);
  console.log(`Go client sample: ${link} -> ${binary} (built in ${Math.round((Date.now() - started) / 1000)} s)`);
}

withCacheLock('go-client', main);
