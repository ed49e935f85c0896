/**
 * `npm run build` (run by `npm ci` as the `prepare` step): compiles src/, workflows/,
 * activities/ and worker/ to dist/ (tsconfig.build.json, with declarations) and, meanwhile, bundles
 * the workflows twice, each with a record of the sources it was built from: dist/workflow-bundle.js
 * with the OpenTelemetry workflow interceptors (a worker that traces) and
 * dist/workflow-bundle-untraced.js with only their promise turns (one that does not; issue 34). Last
 * it writes dist/build-info.json, whose start time tells bin/react-agent.js whether the compiled CLI
 * is newer than the sources.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowPreloadModules } from '../src/config/workflow-preload-modules';
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../src/config/project-root';
import {
  defaultWorkflowBundle,
  recordPathOf,
  workflowInterceptorModules,
  workflowSourcesHash,
  type WorkflowBundleRecord,
} from './workflow-bundle';

const dist = join(PROJECT_ROOT, 'dist');

/** Writes a file whole or not at all (a reader never sees half of it). */
function writeAtomically(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** Runs tsc on tsconfig.build.json. */
async function compile(): Promise<'compiled' | 'failed' | 'no TypeScript'> {
  let tsc: string;
  try {
    tsc = require.resolve('typescript/bin/tsc');
  } catch {
    console.warn(
      'build: TypeScript is not installed (a production install?); react-agent runs the sources through tsx.',
    );
    return 'no TypeScript';
  }
  const child = spawn(process.execPath, [tsc, '-p', join(PROJECT_ROOT, 'tsconfig.build.json')], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolveExit, reject) =>
    child.once('error', reject).once('exit', resolveExit),
  );
  return code === 0 ? 'compiled' : 'failed';
}

/** The traced bundle, then the untraced one (one webpack at a time beside tsc on small machines). */
async function bundle(): Promise<void> {
  // Both bundles come from the same sources: hashed and listed once.
  const sourcesHash = workflowSourcesHash();
  if (sourcesHash === undefined) throw new Error('workflows/ and src/core/ are needed to build the workflow bundle');
  const preloadModules = workflowPreloadModules();
  for (const traced of [true, false]) await bundleOne(traced, sourcesHash, preloadModules);
}

async function bundleOne(traced: boolean, sourcesHash: string, preloadModules: string[]): Promise<void> {
  const silent = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(PROJECT_ROOT, 'workflows', 'index.ts'),
    workflowInterceptorModules: [...workflowInterceptorModules(traced)],
    // src/core loaded once per workflow thread, not once per run (issue 34).
    preloadModules,
    logger: {
      info: silent,
      warn: (message: string) => console.warn(`build: ${message}`),
      error: (message: string) => console.error(`build: ${message}`),
      debug: silent,
      trace: silent,
      log: silent,
    } as never,
  });
  // Both records hold the same sources hash: the same workflow code, so the same default build id (docs/deploys.md).
  writeAtomically(defaultWorkflowBundle(traced), code);
  const record: WorkflowBundleRecord = { sourcesHash, builtAt: new Date().toISOString() };
  writeAtomically(recordPathOf(defaultWorkflowBundle(traced)), `${JSON.stringify(record, null, 2)}\n`);
}

async function main(): Promise<number> {
  const startedAtMs = Date.now();
  mkdirSync(dist, { recursive: true });
  const [compiled, bundled] = await Promise.allSettled([compile(), bundle()]);
  if (bundled.status === 'rejected') {
    console.error(`build: the workflow bundle failed: ${(bundled.reason as Error).stack ?? String(bundled.reason)}`);
    return 1;
  }
  if (compiled.status === 'fulfilled' && compiled.value === 'no TypeScript') return 0; // the bundle alone
  if (compiled.status === 'rejected' || compiled.value === 'failed') {
    console.error(
      `build: tsc failed${compiled.status === 'rejected' ? `: ${String(compiled.reason)}` : ''}; react-agent runs the sources through tsx until a build succeeds.`,
    );
    return 1;
  }
  writeAtomically(
    join(dist, 'build-info.json'),
    `${JSON.stringify({ startedAtMs, startedAt: new Date(startedAtMs).toISOString() }, null, 2)}\n`,
  );
  console.log(
    `build: dist/ compiled and dist/workflow-bundle.js and dist/workflow-bundle-untraced.js bundled in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
