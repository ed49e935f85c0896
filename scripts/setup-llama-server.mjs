#!/usr/bin/env node
// Sets up what the real-server test tier (test/real-server/) needs, offline but for two package
// registries; the build and the venv in the user's cache (scripts/cached-tools.mjs:
// ~/.cache/react-agent/llama-server/<versions>/, linked from .tools/llama-server/), the models in
// .tools/llama-server/:
//
//   bin/llama-server   llama.cpp's OpenAI-compatible server, built here from the llama.cpp source
//                      that npm's node-llama-cpp@3.21.1 ships as a git bundle
//                      (llama/gitRelease.bundle). The package is fetched with `npm pack` and only
//                      unpacked, never added to the project's dependencies. No HTTPS, no curl, no
//                      prebuilt Web UI: nothing is downloaded at build or run time.
//   venv/              a Python venv with PyPI's `gguf` (pinned), used by the model generator
//   models/            tiny GGUF models with random weights and a real byte-level BPE tokenizer,
//                      written by scripts/real-server/make-tiny-model.py (ChatML with tools, and a
//                      variant with a thinking template)
//
// Idempotent: each step is skipped when its result is already there and works (the binary answers
// `--version`), so a second run (or a second clone on this machine) takes seconds. The build takes about 6–9 minutes on 2 cores.
// Run it with `npm run setup:llama-server`; LLAMA_SERVER_BUILD_JOBS overrides the parallelism (2).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDirectory, pointLinkAt, withCacheLock } from './cached-tools.mjs';

const NODE_LLAMA_CPP_VERSION = '3.21.1';
const GGUF_VERSION = '0.19.0';
const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const toolDirectory = join(projectRoot, '.tools', 'llama-server');
// The long build (and the gguf venv) lives in the user's cache, keyed by the versions, so a second
// clone on this machine links to it instead of building again; .tools/llama-server/bin and venv
// are links to it. The models stay with the clone (its generator script writes them).
const cachedDirectory = join(
  cacheDirectory(),
  'llama-server',
  `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}-gguf-${GGUF_VERSION}`,
);
const packageDirectory = join(cachedDirectory, `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}`);
const sourceDirectory = join(cachedDirectory, 'source');
const buildDirectory = join(cachedDirectory, 'build');
const binary = join(cachedDirectory, 'bin', 'llama-server');
const venvDirectory = join(cachedDirectory, 'venv');
const venvPython = join(venvDirectory, 'bin', 'python');
const modelDirectory = join(toolDirectory, 'models');
const modelGenerator = join(projectRoot, 'scripts', 'real-server', 'make-tiny-model.py');
const buildJobs = process.env.LLAMA_SERVER_BUILD_JOBS ?? '2';

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { stdio: 'inherit', ...options });
}

function versionOf(path) {
  if (!existsSync(path)) return undefined;
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) return undefined;
  // llama-server prints its version on stderr: "version: 1 (80fb11a)\nbuilt with ...".
  return `${result.stdout}${result.stderr}`.trim().split('\n')[0];
}

function elapsedSince(start) {
  return `${((Date.now() - start) / 1000).toFixed(0)} s`;
}

/** Unpacks node-llama-cpp's tarball (without installing it) and clones its llama.cpp bundle. */
function fetchSource() {
  if (existsSync(join(sourceDirectory, 'CMakeLists.txt'))) {
    console.log(`llama.cpp source: ${sourceDirectory} (already cloned)`);
    return;
  }
  mkdirSync(packageDirectory, { recursive: true });
  const tarball = join(cachedDirectory, `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`);
  if (!existsSync(tarball)) {
    console.log(
      `Fetching node-llama-cpp@${NODE_LLAMA_CPP_VERSION} from the npm registry (npm pack; not installed) ...`,
    );
    run('npm', ['pack', `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, '--silent', '--pack-destination', cachedDirectory]);
  }
  run('tar', ['-xzf', tarball, '-C', packageDirectory, '--strip-components=1', 'package/llama']);
  const bundle = join(packageDirectory, 'llama', 'gitRelease.bundle');
  rmSync(sourceDirectory, { recursive: true, force: true });
  run('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', bundle, sourceDirectory]);
  // The clone is all that is needed from the package (68 MB packed and unpacked).
  rmSync(tarball, { force: true });
  rmSync(packageDirectory, { recursive: true, force: true });
}

/** Configures and builds only the llama-server target, statically linked, then copies it to bin/. */
function buildServer() {
  const started = Date.now();
  const generator =
    spawnSync('sh', ['-c', 'command -v ninja'], { encoding: 'utf8' }).status === 0 ? ['-G', 'Ninja'] : [];
  run('cmake', [
    '-S',
    sourceDirectory,
    '-B',
    buildDirectory,
    ...generator,
    '-DCMAKE_BUILD_TYPE=Release',
    '-DBUILD_SHARED_LIBS=OFF',
    '-DGGML_NATIVE=ON',
    '-DLLAMA_CURL=OFF',
    '-DLLAMA_OPENSSL=OFF',
    '-DLLAMA_USE_PREBUILT_UI=OFF',
    '-DLLAMA_BUILD_UI=OFF',
    '-DLLAMA_BUILD_TESTS=OFF',
    '-DLLAMA_BUILD_EXAMPLES=OFF',
    '-DLLAMA_BUILD_SERVER=ON',
  ]);
  run('cmake', ['--build', buildDirectory, '--config', 'Release', '--target', 'llama-server', '-j', buildJobs]);
  mkdirSync(dirname(binary), { recursive: true });
  copyFileSync(join(buildDirectory, 'bin', 'llama-server'), binary);
  console.log(`Built llama-server in ${elapsedSince(started)}.`);
}

function ensureServer() {
  const existing = versionOf(binary);
  if (existing) {
    console.log(`llama-server: ${binary} (${existing}, already built)`);
    return;
  }
  console.log(
    `Building llama-server from node-llama-cpp@${NODE_LLAMA_CPP_VERSION}'s llama.cpp source into ${cachedDirectory} (about 6–9 minutes on 2 cores) ...`,
  );
  fetchSource();
  buildServer();
  const version = versionOf(binary);
  if (!version) throw new Error(`${binary} was built but '${binary} --version' fails.`);
  console.log(`llama-server: ${binary} (${version}, built)`);
}

function ensureGguf() {
  const check = existsSync(venvPython)
    ? spawnSync(venvPython, ['-c', 'import importlib.metadata as m; print(m.version("gguf"))'], { encoding: 'utf8' })
    : undefined;
  if (check?.status === 0 && check.stdout.trim() === GGUF_VERSION) {
    console.log(`gguf: ${venvDirectory} (gguf ${GGUF_VERSION}, already installed)`);
    return;
  }
  console.log(`Installing PyPI gguf==${GGUF_VERSION} into ${venvDirectory} ...`);
  run('python3', ['-m', 'venv', venvDirectory]);
  run(join(venvDirectory, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `gguf==${GGUF_VERSION}`,
  ]);
}

function ensureModels() {
  // The generator is itself idempotent: it rewrites a model only when its settings changed.
  run(venvPython, [modelGenerator, '--output-directory', modelDirectory]);
}

function main() {
  const started = Date.now();
  mkdirSync(toolDirectory, { recursive: true });
  mkdirSync(cachedDirectory, { recursive: true });
  try {
    ensureServer();
    ensureGguf();
    pointLinkAt(join(toolDirectory, 'bin'), join(cachedDirectory, 'bin'));
    pointLinkAt(join(toolDirectory, 'venv'), venvDirectory);
    ensureModels();
  } catch (error) {
    console.error(
      `Could not set up llama-server for the real-server tests: ${error.message}\n` +
        'It needs cmake, a C++17 compiler, git, python3 with venv, and the npm and PyPI registries. ' +
        `Fix the cause and run 'npm run setup:llama-server' again (finished steps are kept in ${cachedDirectory}).`,
    );
    process.exit(1);
  }
  console.log(
    `Real-server tools ready in ${toolDirectory} (build cached in ${cachedDirectory}; ${elapsedSince(started)}).`,
  );
}

withCacheLock('llama-server', main);
