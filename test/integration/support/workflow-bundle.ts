import { bundleWorkflowCode } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UNTRACED_WORKFLOW_INTERCEPTOR_MODULES } from '../../../src/config/workflow-interceptors';
import { workflowPreloadModules } from '../../../src/config/workflow-preload-modules';

const root = resolve(__dirname, '../../..');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory()
      ? sourceFiles(path)
      : name.endsWith('.ts') || name.endsWith('.json')
        ? [path]
        : [];
  });
}

/**
 * Bundles workflows/ once and caches the bundle by the hash of the workflow-reachable sources
 * (the contract's schemas/ included: src/core validates inputs against them),
 * so every worker a test starts skips webpack (seconds each on 2 cores).
 *
 * @param entry Another workflows module to bundle (a test's changed build); default workflows/.
 * @param interceptorModules The workflow interceptor modules bundled; default those of a worker that
 *   does not trace (UNTRACED_WORKFLOW_INTERCEPTOR_MODULES), as the tests' workers mostly are; a test
 *   whose worker traces bundles TRACING_WORKFLOW_INTERCEPTOR_MODULES.
 */
export async function cachedWorkflowBundle(
  entry?: string,
  interceptorModules: readonly string[] = UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
): Promise<string> {
  const hash = createHash('sha256');
  if (entry !== undefined) hash.update(entry).update(readFileSync(entry));
  for (const file of [
    ...sourceFiles(join(root, 'workflows')),
    ...sourceFiles(join(root, 'src')),
    ...sourceFiles(join(root, 'schemas')),
  ].sort()) {
    hash.update(file).update(readFileSync(file));
  }
  hash
    .update(readFileSync(join(root, 'package-lock.json')))
    .update(JSON.stringify(interceptorModules))
    .update('preloaded src/core');
  const path = join(tmpdir(), `react-agent-workflows-${hash.digest('hex').slice(0, 16)}.js`);
  if (!existsSync(path)) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: entry ?? require.resolve('../../../workflows'),
      workflowInterceptorModules: [...interceptorModules],
      preloadModules: workflowPreloadModules(),
      logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
    });
    // Files run two at a time: each writes its own temporary file and renames it into place, so a
    // file that finds the bundle reads a whole one.
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, path);
  }
  return path;
}
