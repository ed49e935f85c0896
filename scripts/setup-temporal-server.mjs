#!/usr/bin/env node
// Builds what the production stack (`npm run stack -- up`, docs/production.md) and the cluster
// test tier (test/cluster/) need from Temporal's own sources, through the Go module proxy only:
//
//   bin/temporal-server     go.temporal.io/server@v1.32.2 ./cmd/server (frontend, history,
//                           matching and worker services; run one per process with --service)
//   bin/temporal-sql-tool   go.temporal.io/server@v1.32.2 ./cmd/tools/sql (creates the database
//                           and applies the PostgreSQL schemas it embeds)
//   bin/temporal-ui-server  github.com/temporalio/ui-server/v2@v2.58.1 ./cmd/server (the Web UI),
//                           with its pinned github.com/labstack/echo/v4 and go.temporal.io/api
//                           raised to versions the proxy serves (v4.16.4, v1.64.1). Optional: when
//                           it does not build, the script says so and the stack runs without it.
//
// The server's go.mod asks for a newer Go than most machines have, so the build runs with
// GOTOOLCHAIN=go1.27.3, which the `go` command fetches from the module proxy as a module.
// The binaries live in the user's cache (scripts/cached-tools.mjs), keyed by these versions:
// ~/.cache/react-agent/temporal-server/<key>/bin/, linked from .tools/temporal-server. A second
// clone on this machine links to them in seconds; a new machine builds from scratch (7–13 minutes
// and ~2 GB of memory on 2 cores; ~20 s when Go's build cache is warm). Nothing is downloaded at
// run time. TEMPORAL_SERVER_BUILD_JOBS sets `go build -p` (default: Go's own, the number of CPUs).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDirectory, pointLinkAt, withCacheLock } from './cached-tools.mjs';

const SERVER_MODULE = 'go.temporal.io/server';
const SERVER_VERSION = 'v1.32.2';
const GO_TOOLCHAIN = 'go1.27.3';
const UI_MODULE = 'github.com/temporalio/ui-server/v2';
const UI_VERSION = 'v2.58.1';
// ui-server v2.58.1 pins versions of these that the proxy no longer serves; these build with it.
const UI_RAISED_REQUIREMENTS = ['github.com/labstack/echo/v4@v4.16.4', 'go.temporal.io/api@v1.64.1'];

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const link = join(projectRoot, '.tools', 'temporal-server');
const key = `server-${SERVER_VERSION}-ui-${UI_VERSION}-${GO_TOOLCHAIN}`;
const cachedDirectory = join(cacheDirectory(), 'temporal-server', key);
const binDirectory = join(cachedDirectory, 'bin');
const uiUnavailableFile = join(cachedDirectory, 'ui-unavailable.txt');
const goEnvironment = { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-buildvcs=false' };
const buildJobs = process.env.TEMPORAL_SERVER_BUILD_JOBS ? ['-p', process.env.TEMPORAL_SERVER_BUILD_JOBS] : [];

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}${options.cwd ? `   (in ${options.cwd})` : ''}`);
  return execFileSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: goEnvironment, ...options });
}

function seconds(since) {
  return `${Math.round((Date.now() - since) / 1000)} s`;
}

/** True when `binary` exists and answers `args` (a version or help flag) within 30 s. */
function answers(binary, args) {
  if (!existsSync(binary)) return false;
  const result = spawnSync(binary, args, { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0;
}

/** Downloads `module@version` into Go's module cache and returns its (read-only) directory. */
function downloadModule(module, version) {
  const output = run('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: cachedDirectory,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const info = JSON.parse(output);
  if (info.Error) throw new Error(`go mod download ${module}@${version}: ${info.Error}`);
  return info.Dir;
}

/** Builds `package` inside `moduleDirectory` into bin/`name` (written aside, then renamed). */
function build(moduleDirectory, packagePath, name) {
  const target = join(binDirectory, name);
  const partial = `${target}.${process.pid}.tmp`;
  try {
    run('go', ['build', ...buildJobs, '-mod=readonly', '-trimpath', '-ldflags=-s -w', '-o', partial, packagePath], {
      cwd: moduleDirectory,
    });
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  renameSync(partial, target);
}

function ensureServer() {
  const server = join(binDirectory, 'temporal-server');
  const sqlTool = join(binDirectory, 'temporal-sql-tool');
  if (answers(server, ['--version']) && answers(sqlTool, ['--version'])) {
    console.log(`Temporal server ${SERVER_VERSION}: ${binDirectory} (already built)`);
    return;
  }
  const started = Date.now();
  console.log(
    `Building Temporal server ${SERVER_VERSION} (cmd/server, cmd/tools/sql) with ${GO_TOOLCHAIN}; 7–13 minutes on 2 cores the first time ...`,
  );
  const source = downloadModule(SERVER_MODULE, SERVER_VERSION);
  build(source, './cmd/server', 'temporal-server');
  build(source, './cmd/tools/sql', 'temporal-sql-tool');
  if (!answers(server, ['--version'])) throw new Error(`${server} was built but '${server} --version' fails.`);
  console.log(`Built Temporal server ${SERVER_VERSION} in ${seconds(started)}.`);
}

function ensureUi() {
  const ui = join(binDirectory, 'temporal-ui-server');
  if (existsSync(ui) && statSync(ui).size > 0) {
    console.log(`Temporal Web UI server ${UI_VERSION}: ${ui} (already built)`);
    return;
  }
  const started = Date.now();
  try {
    console.log(`Building Temporal's Web UI server ${UI_VERSION} (raising ${UI_RAISED_REQUIREMENTS.join(', ')}) ...`);
    const pristine = downloadModule(UI_MODULE, UI_VERSION);
    // The module cache is read-only and its go.mod must change: build from a writable copy.
    const source = join(cachedDirectory, 'ui-server-source');
    rmSync(source, { recursive: true, force: true });
    cpSync(pristine, source, { recursive: true });
    makeWritable(source);
    run('go', ['get', ...UI_RAISED_REQUIREMENTS], { cwd: source });
    run('go', ['mod', 'tidy'], { cwd: source });
    build(source, './cmd/server', 'temporal-ui-server');
    rmSync(source, { recursive: true, force: true });
    rmSync(uiUnavailableFile, { force: true });
    console.log(`Built the Web UI server ${UI_VERSION} in ${seconds(started)}.`);
  } catch (error) {
    const reason = `The Web UI server ${UI_MODULE}@${UI_VERSION} did not build (${error.message.split('\n')[0]}); the stack runs without the Web UI.`;
    writeFileSync(uiUnavailableFile, `${reason}\n`);
    console.error(reason);
  }
}

function makeWritable(directory) {
  chmodSync(directory, 0o755);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) makeWritable(path);
    else if (entry.isFile()) chmodSync(path, 0o644);
  }
}

function main() {
  const started = Date.now();
  const goVersion = spawnSync('go', ['version'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } });
  if (goVersion.error || goVersion.status !== 0) {
    console.error(
      "Could not set up Temporal's server: `go` is not on PATH (or does not run). Install Go 1.21 or later (it fetches the go1.27.3 toolchain itself), then run 'npm run setup:temporal-server'.",
    );
    process.exit(1);
  }
  mkdirSync(binDirectory, { recursive: true });
  try {
    ensureServer();
  } catch (error) {
    console.error(
      `Could not build Temporal's server: ${error.message}\n` +
        `It needs \`go\` (1.21+), the Go module proxy (${process.env.GOPROXY || 'proxy.golang.org'}) and about 2 GB of free memory. ` +
        `Fix the cause and run 'npm run setup:temporal-server' again (Go keeps what it downloaded and compiled).`,
    );
    process.exit(1);
  }
  ensureUi();
  pointLinkAt(link, cachedDirectory);
  console.log(`Temporal server tools ready: ${link} -> ${cachedDirectory} (${seconds(started)}).`);
}

withCacheLock('temporal-server', main);
