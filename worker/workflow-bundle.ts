/**
 * The workflow bundles built at install (`npm run build`: dist/workflow-bundle.js for a worker that
 * traces, dist/workflow-bundle-untraced.js for one that does not), so a worker starts without
 * running webpack, and the record of the sources they were built from, so a bundle older than them
 * is refused instead of running old workflow code.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ConfigurationError } from '../src/config';
import { PROJECT_ROOT } from '../src/config/project-root';
export { workflowInterceptorModules } from '../src/config/workflow-interceptors';

/**
 * The traced bundle `npm run build` writes (with the OpenTelemetry workflow interceptors), which a
 * worker with an OTLP endpoint uses when REACT_AGENT_WORKFLOW_BUNDLE is unset.
 */
export const DEFAULT_WORKFLOW_BUNDLE = join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');

/**
 * The untraced bundle `npm run build` writes (workflows/tracing-turns-interceptor.ts instead of the
 * OpenTelemetry interceptors: their promise turns, no span; issue 34), which a worker without an OTLP endpoint uses when
 * REACT_AGENT_WORKFLOW_BUNDLE is unset.
 */
export const DEFAULT_UNTRACED_WORKFLOW_BUNDLE = join(PROJECT_ROOT, 'dist', 'workflow-bundle-untraced.js');

/** The bundle built at install for a worker that traces (`traced`) or does not. */
export function defaultWorkflowBundle(traced: boolean): string {
  return traced ? DEFAULT_WORKFLOW_BUNDLE : DEFAULT_UNTRACED_WORKFLOW_BUNDLE;
}

/**
 * The folders the workflow code is built from: workflows/ imports src/core (and activities/ as
 * types only), and src/core reads the contract's schemas/ to validate inputs.
 */
export const WORKFLOW_SOURCE_FOLDERS = ['workflows', 'src/core', 'schemas'];

/** What is recorded beside a bundle (`<bundle>.json`). */
export interface WorkflowBundleRecord {
  /** {@link workflowSourcesHash} of the sources the bundle was built from. */
  sourcesHash: string;
  /** When it was built (ISO 8601). */
  builtAt: string;
}

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
 * SHA-256 over the .ts and .json files of workflows/, src/core and schemas/ (paths relative to the project, and
 * contents) and the @temporalio/workflow version bundled with them; undefined when the sources
 * are not there (an installation of the compiled code alone).
 */
export function workflowSourcesHash(root: string = PROJECT_ROOT): string | undefined {
  if (!WORKFLOW_SOURCE_FOLDERS.every((folder) => existsSync(join(root, folder)))) return undefined;
  const hash = createHash('sha256');
  const files = WORKFLOW_SOURCE_FOLDERS.flatMap((folder) => sourceFiles(join(root, folder)))
    .map((file) => relative(root, file).split('\\').join('/'))
    .sort();
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  const { version } = JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as {
    version: string;
  };
  hash.update(`@temporalio/workflow@${version}`);
  const interceptors = JSON.parse(
    readFileSync(require.resolve('@temporalio/interceptors-opentelemetry/package.json'), 'utf8'),
  ) as { version: string };
  hash.update(`@temporalio/interceptors-opentelemetry@${interceptors.version}`);
  return hash.digest('hex');
}

/** Where a bundle's record is kept: `dist/workflow-bundle.js` → `dist/workflow-bundle.json`. */
export function recordPathOf(bundle: string): string {
  return bundle.replace(/\.js$/, '') + '.json';
}

/** The workflow code a Worker runs: a prebuilt bundle, or workflows/ bundled by webpack at start. */
export type WorkflowCode = { workflowBundle: { codePath: string } } | { workflowsPath: string };

/**
 * The workflow code for this worker. `configured` (REACT_AGENT_WORKFLOW_BUNDLE) is used as given;
 * else the bundle built at install for a worker that traces or not (`options.traced`, default
 * true: {@link defaultWorkflowBundle}). A bundle with a record that names other sources than the
 * current ones is refused (ConfigurationError saying to run `npm run build`); only when there is no
 * prebuilt bundle at all does the worker bundle workflows/ itself (with
 * `workflowInterceptorModules(traced)`), and `log` says so.
 */
export function chooseWorkflowCode(
  configured: string | undefined,
  log: (line: string) => void,
  options: { defaultBundle?: string; root?: string; traced?: boolean } = {},
): WorkflowCode {
  const bundle = configured ?? options.defaultBundle ?? defaultWorkflowBundle(options.traced ?? true);
  if (!configured && !existsSync(bundle)) {
    log(
      `No prebuilt workflow bundle (${bundle}; \`npm run build\` makes one): bundling workflows/ now, which takes a while.`,
    );
    return { workflowsPath: require.resolve('../workflows') };
  }
  const recordPath = recordPathOf(bundle);
  if (existsSync(recordPath)) {
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as WorkflowBundleRecord;
    const current = workflowSourcesHash(options.root);
    if (current !== undefined && current !== record.sourcesHash) {
      throw new ConfigurationError(
        'REACT_AGENT_WORKFLOW_BUNDLE',
        `The workflow bundle ${bundle} (built ${record.builtAt}) is older than the workflow sources: ${WORKFLOW_SOURCE_FOLDERS.map((folder) => `${folder}/`).join(' or ')} changed since. ` +
          'Rebuild it with `npm run build`, or point REACT_AGENT_WORKFLOW_BUNDLE at a current bundle.',
      );
    }
  }
  return { workflowBundle: { codePath: bundle } };
}

/**
 * Where a worker's workflow code comes from, for its start line: the bundle (relative to the
 * working directory) or `bundled at start`, and whether the worker traces; `none` for a worker
 * that runs no workflows.
 */
export function describeWorkflowCode(code: WorkflowCode | undefined, traced: boolean): string {
  if (code === undefined) return 'none';
  const from = 'workflowBundle' in code ? relative(process.cwd(), code.workflowBundle.codePath) : 'bundled at start';
  return `${from}, ${traced ? 'traced' : 'untraced'}`;
}

/**
 * The default build id of a versioned worker (REACT_AGENT_BUILD_ID unset; docs/deploys.md): the
 * first 16 hex digits of the hash of the workflow code this checkout runs, so every change of the
 * workflow code is a new build and the same code on every machine and role is the same build. The
 * bundle's recorded {@link workflowSourcesHash} when it has a record (what `npm run build`
 * writes), else SHA-256 of the bundle file itself; with no bundle (the worker bundles at start)
 * the hash of the sources. A worker of any role computes it the same way, so model and tool
 * workers of a build share its version.
 *
 * @throws ConfigurationError naming REACT_AGENT_BUILD_ID when there is neither a bundle nor the sources.
 */
export function workflowBuildId(
  configured: string | undefined,
  options: { defaultBundle?: string; root?: string } = {},
): string {
  const bundle = configured ?? options.defaultBundle ?? DEFAULT_WORKFLOW_BUNDLE;
  let hash: string | undefined;
  if (existsSync(bundle)) {
    const recordPath = recordPathOf(bundle);
    hash = existsSync(recordPath)
      ? (JSON.parse(readFileSync(recordPath, 'utf8')) as WorkflowBundleRecord).sourcesHash
      : createHash('sha256').update(readFileSync(bundle)).digest('hex');
  } else if (!configured) {
    hash = workflowSourcesHash(options.root);
  }
  if (hash === undefined) {
    throw new ConfigurationError(
      'REACT_AGENT_BUILD_ID',
      `A versioned worker needs a build id: REACT_AGENT_BUILD_ID is unset and there is no workflow bundle (${bundle}) or workflow sources to derive one from. Set REACT_AGENT_BUILD_ID.`,
    );
  }
  return hash.slice(0, 16);
}
