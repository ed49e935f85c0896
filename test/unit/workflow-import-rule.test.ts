import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from '@jest/globals';
import { importsOf, PROJECT_ROOT, resolveFile, typeScriptFilesUnder } from './support/source-imports';

/**
 * The folder rule of docs/architecture.md, enforced: workflow code (and the shared code it reaches)
 * imports nothing with side effects, and only `import type` from activities/.
 */
const root = PROJECT_ROOT;
const PACKAGES_ALLOWED_IN_WORKFLOW_CODE = new Set([
  '@temporalio/workflow',
  '@temporalio/common',
  'json5',
  'json5/lib/parse',
  're2js',
  // The SDK's flag check, as the tracing interceptors ask it (workflows/tracing-turns-interceptor.ts, issue 34).
  '@temporalio/workflow/lib/flags',
  '@temporalio/workflow/lib/global-attributes',
]);

function workflowFiles(): string[] {
  return typeScriptFilesUnder('workflows');
}

function violations(): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const queue = workflowFiles();
  while (queue.length) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const where = relative(root, file);
    const source = readFileSync(file, 'utf8');
    if (/process\.env/.test(source)) problems.push(`${where} reads process.env`);
    // The tracing interceptors' span ids draw from the workflow's seeded random stream (issue 34): a number
    // drawn by workflow code would differ between a traced and an untraced worker, and so would its commands.
    if (/Math\.random|uuid4\(/.test(source)) problems.push(`${where} draws from the workflow's random stream`);
    for (const { specifier, typeOnly } of importsOf(file)) {
      if (!specifier.startsWith('.')) {
        if (!typeOnly && !PACKAGES_ALLOWED_IN_WORKFLOW_CODE.has(specifier))
          problems.push(`${where} imports package ${specifier}`);
        continue;
      }
      const target = relative(root, resolveFile(file, specifier));
      if (target.startsWith('activities/') || target.startsWith('worker/')) {
        if (!typeOnly || target.startsWith('worker/'))
          problems.push(`${where} imports ${target} (only 'import type' from activities/ is allowed)`);
        continue;
      }
      if (!['workflows/', 'src/core/', 'schemas/'].some((folder) => target.startsWith(folder))) {
        problems.push(`${where} imports ${target}, outside the workflow code (workflows/, src/core/, schemas/)`);
        continue;
      }
      if (!typeOnly) queue.push(resolveFile(file, specifier));
    }
  }
  return problems;
}

test('workflow code imports only workflow-safe modules, activities only as types, and draws no random numbers', () => {
  assert.deepEqual(violations(), []);
});

test('the rule checker notices a forbidden import', () => {
  const bad = importsOf(join(root, 'activities', 'model-activity.ts'));
  assert.ok(
    bad.some((entry) => entry.specifier === '@temporalio/activity' && !entry.typeOnly),
    'model-activity imports @temporalio/activity at run time',
  );
  assert.ok(!PACKAGES_ALLOWED_IN_WORKFLOW_CODE.has('@temporalio/activity'));
});

test('nothing imports worker/', () => {
  const offenders: string[] = [];
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (name === 'node_modules' || name.startsWith('.') || name === 'worker') continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (
        name.endsWith('.ts') &&
        importsOf(path).some(({ specifier }) => /(^|\/)worker(\/|$)/.test(specifier) && specifier.startsWith('.'))
      ) {
        offenders.push(relative(root, path));
      }
    }
  };
  walk(root);
  assert.deepEqual(offenders, []);
});
