import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from '@jest/globals';
import { workflowPreloadModules } from '../../src/config/workflow-preload-modules';
import { PROJECT_ROOT, typeScriptFilesUnder } from './support/source-imports';

test('the modules every run of a workflow thread shares are all of src/core, sorted, and nothing else', () => {
  const modules = [...workflowPreloadModules()];
  assert.deepEqual(modules, [...modules].sort());
  assert.deepEqual(
    modules.map((path) => relative(PROJECT_ROOT, path)).sort(),
    typeScriptFilesUnder(join('src', 'core'))
      .map((path) => relative(PROJECT_ROOT, path))
      .sort(),
  );
  for (const path of modules) assert.ok(existsSync(path), path);
  assert.ok(modules.some((path) => path.endsWith(join('src', 'core', 'json-schema-validation.ts'))));
  assert.ok(!modules.some((path) => path.includes(`${join(PROJECT_ROOT, 'workflows')}`)));
});
