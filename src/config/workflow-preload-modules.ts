import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root';

/**
 * The modules a workflow bundle loads once per worker thread and shares between all the workflow
 * runs it holds (the SDK's `preloadModules`, issue 34): every module of src/core/, and with them
 * what they import (schemas/, json5's parser, re2js). Without this the SDK's reusable V8 context
 * gives each run its own instance of every module the run imports, to keep one run's module state
 * from another's; src/core's instances were about 250 KiB of a run's 650 KiB in the workflow
 * thread's heap (docs/figures.md, "What a run in flight costs the worker").
 *
 * Sharing is safe because src/core is pure functions (docs/architecture.md): its module-level
 * state is a memo of the project's own schemas' compiled patterns (json-schema-validation.ts) and
 * json5's parser's scratch, reset at each parse; neither carries anything from one run to
 * another. The SDK freezes what a preloaded module exports. Not shared: workflows/ (a run's code)
 * and the tracing interceptors (their module keeps its run's tracer).
 *
 * @param root the project's folder; default the one holding package.json.
 * @returns absolute paths of src/core's TypeScript modules, sorted (the bundle is the same from one build to the next).
 */
export function workflowPreloadModules(root: string = PROJECT_ROOT): string[] {
  return typescriptModules(join(root, 'src', 'core')).sort();
}

function typescriptModules(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typescriptModules(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}
