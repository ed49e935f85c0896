import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { importsOf, projectPath, resolveFile, typeScriptFilesUnder } from './support/source-imports';

/*
 * The floors of docs/architecture.md, enforced over the import graph of the product code (src/,
 * workflows/, activities/, worker/, and the generated schemas/ they read): each floor imports only the floors below it, nothing imports worker/,
 * workflows/ import activities only as types, and no module reaches itself through its imports.
 */

/** The floors, their folders and what each may import: one table, also read by eslint.config.mjs. */
const FLOORS = JSON.parse(readFileSync(join(__dirname, 'support', 'floors.json'), 'utf8')) as {
  folders: Record<Floor, string>;
  allowed: Record<Floor, Floor[]>;
  typeOnly: Partial<Record<Floor, Floor[]>>;
  workflowSafePackages: string[];
};

/** The floor a file is on, or undefined outside the product code. */
type Floor =
  | 'schemas'
  | 'core'
  | 'domain'
  | 'client'
  | 'storage'
  | 'documents'
  | 'knowledge-base'
  | 'reports'
  | 'config'
  | 'processes'
  | 'cli'
  | 'workflows'
  | 'activities'
  | 'worker';

function floorOf(path: string): Floor | undefined {
  for (const [floor, folder] of Object.entries(FLOORS.folders) as Array<[Floor, string]>) {
    if (path.startsWith(`${folder}/`)) return floor;
  }
  return undefined;
}

/** Which floors each floor may import at run time (itself included). */
const ALLOWED = Object.fromEntries(
  Object.entries(FLOORS.allowed).map(([floor, floors]) => [floor, new Set(floors)]),
) as unknown as Record<Floor, ReadonlySet<Floor>>;

/** Floors a floor may import with `import type` only, besides ALLOWED. */
const TYPE_ONLY = Object.fromEntries(
  Object.entries(FLOORS.typeOnly).map(([floor, floors]) => [floor, new Set(floors)]),
) as Partial<Record<Floor, ReadonlySet<Floor>>>;

/** Packages src/core and src/domain may import: workflow-safe ones only. */
const CORE_PACKAGES = new Set(FLOORS.workflowSafePackages);

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function productFiles(): string[] {
  return ['src', 'workflows', 'activities', 'worker'].flatMap((folder) => typeScriptFilesUnder(folder));
}

/** The files of the OpenAI-compatible model adapter, the only product files that may import `openai`. */
const OPENAI_ADAPTER = /^activities\/model\/openai-[a-z-]+\.ts$/;
/** The files of the Anthropic Messages adapter (issue 31), the only product files that may import `@anthropic-ai/sdk`. */
const ANTHROPIC_ADAPTER = /^activities\/model\/anthropic-[a-z-]+\.ts$/;

function graph(): { edges: Edge[]; packages: Array<{ from: string; specifier: string }> } {
  const edges: Edge[] = [];
  const packages: Array<{ from: string; specifier: string }> = [];
  for (const file of productFiles()) {
    for (const { specifier, typeOnly } of importsOf(file)) {
      if (specifier.startsWith('.'))
        edges.push({ from: projectPath(file), to: projectPath(resolveFile(file, specifier)), typeOnly });
      else packages.push({ from: projectPath(file), specifier });
    }
  }
  return { edges, packages };
}

/** Problems of the floor rule in a list of edges (pure, so the checker itself can be tested). */
function floorViolations(edges: Edge[]): string[] {
  const problems: string[] = [];
  for (const { from, to, typeOnly } of edges) {
    const source = floorOf(from);
    const target = floorOf(to);
    if (!source || !target) {
      problems.push(`${from} imports ${to}, outside the floors`);
      continue;
    }
    if (ALLOWED[source].has(target)) continue;
    if (typeOnly && TYPE_ONLY[source]?.has(target)) continue;
    problems.push(
      `${from} (${source}) imports ${to} (${target})${TYPE_ONLY[source]?.has(target) ? ' by value; use import type' : ''}`,
    );
  }
  return problems;
}

/**
 * The src/core files the workflow code reaches: from every file under workflows/, through imports
 * (type-only ones too) into src/core and on inside it. What src/core holds besides is not workflow
 * code, and belongs in src/domain/.
 */
function reachedFromWorkflows(edges: Edge[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const reached = new Set<string>();
  const pending = edges.filter((edge) => floorOf(edge.from) === 'workflows').map((edge) => edge.from);
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    for (const target of next.get(file) ?? [])
      if (floorOf(target) === 'workflows' || floorOf(target) === 'core') pending.push(target);
  }
  return new Set([...reached].filter((file) => floorOf(file) === 'core'));
}

/** Every cycle in the graph, each as the list of files around it (type-only imports count too). */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const target of next.get(node) ?? []) {
      if (state.get(target) === 'open') found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...next.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe('the import graph', () => {
  const { edges, packages } = graph();

  test('covers every floor', () => {
    const floors = new Set(edges.flatMap((edge) => [floorOf(edge.from), floorOf(edge.to)]));
    for (const floor of Object.keys(ALLOWED)) assert.ok(floors.has(floor as Floor), `no file found on floor ${floor}`);
  });

  test('each floor imports only the floors below it; workflows/ imports activities only as types', () => {
    assert.deepEqual(floorViolations(edges), []);
  });

  test('nothing imports worker/', () => {
    assert.deepEqual(
      edges.filter((edge) => floorOf(edge.to) === 'worker' && floorOf(edge.from) !== 'worker'),
      [],
    );
  });

  test('src/core and src/domain use no Node built-ins and only workflow-safe packages', () => {
    const offenders = packages.filter(
      ({ from, specifier }) =>
        (floorOf(from) === 'core' || floorOf(from) === 'domain') && !CORE_PACKAGES.has(specifier),
    );
    assert.deepEqual(offenders, []);
  });

  test('src/core holds only what workflows reach (pure code no workflow runs goes in src/domain/)', () => {
    const reached = reachedFromWorkflows(edges);
    const coreFiles = typeScriptFilesUnder('src/core').map((file) => projectPath(file));
    assert.deepEqual(
      coreFiles.filter((file) => !reached.has(file)),
      [],
    );
  });

  test('only the model adapter (activities/model/openai-*.ts) imports the openai client: everything else goes through ChatModel', () => {
    const offenders = packages.filter(
      ({ from, specifier }) =>
        (specifier === 'openai' || specifier.startsWith('openai/')) && !OPENAI_ADAPTER.test(from),
    );
    assert.deepEqual(offenders, []);
    assert.ok(
      packages.some(({ from, specifier }) => specifier === 'openai' && OPENAI_ADAPTER.test(from)),
      'the checker sees the adapter import openai',
    );
  });

  test('only the Anthropic adapter (activities/model/anthropic-*.ts) imports @anthropic-ai/sdk', () => {
    const isSdk = (specifier: string) =>
      specifier === '@anthropic-ai/sdk' || specifier.startsWith('@anthropic-ai/sdk/');
    const offenders = packages.filter(({ from, specifier }) => isSdk(specifier) && !ANTHROPIC_ADAPTER.test(from));
    assert.deepEqual(offenders, []);
    assert.ok(
      packages.some(({ from, specifier }) => isSdk(specifier) && ANTHROPIC_ADAPTER.test(from)),
      'the checker sees the adapter import @anthropic-ai/sdk',
    );
  });

  test('has no cycles', () => {
    assert.deepEqual(
      cycles(edges).map((cycle) => cycle.join(' → ')),
      [],
    );
  });

  test('the checkers notice what they look for', () => {
    assert.deepEqual(floorViolations([{ from: 'src/core/a.ts', to: 'src/storage/b.ts', typeOnly: true }]), [
      'src/core/a.ts (core) imports src/storage/b.ts (storage)',
    ]);
    assert.equal(floorViolations([{ from: 'workflows/a.ts', to: 'activities/b.ts', typeOnly: false }]).length, 1);
    assert.deepEqual(floorViolations([{ from: 'workflows/a.ts', to: 'activities/b.ts', typeOnly: true }]), []);
    assert.equal(floorViolations([{ from: 'src/cli/a.ts', to: 'workflows/b.ts', typeOnly: true }]).length, 1);
    assert.deepEqual(floorViolations([{ from: 'workflows/a.ts', to: 'src/domain/b.ts', typeOnly: true }]), [
      'workflows/a.ts (workflows) imports src/domain/b.ts (domain)',
    ]);
    assert.equal(floorViolations([{ from: 'src/core/a.ts', to: 'src/domain/b.ts', typeOnly: false }]).length, 1);
    assert.deepEqual(floorViolations([{ from: 'src/domain/a.ts', to: 'src/core/b.ts', typeOnly: false }]), []);
    assert.equal(floorViolations([{ from: 'src/storage/a.ts', to: 'src/reports/b.ts', typeOnly: false }]).length, 1);
    assert.equal(
      floorViolations([{ from: 'src/documents/a.ts', to: 'src/knowledge-base/b.ts', typeOnly: false }]).length,
      1,
    );
    assert.equal(floorViolations([{ from: 'src/processes/a.ts', to: 'src/cli/b.ts', typeOnly: false }]).length, 1);
    assert.equal(floorViolations([{ from: 'activities/a.ts', to: 'src/processes/b.ts', typeOnly: false }]).length, 1);
    const reached = reachedFromWorkflows([
      { from: 'workflows/a.ts', to: 'src/core/b.ts', typeOnly: true },
      { from: 'src/core/b.ts', to: 'src/core/c.ts', typeOnly: false },
      { from: 'activities/d.ts', to: 'src/core/e.ts', typeOnly: false },
    ]);
    assert.deepEqual([...reached].sort(), ['src/core/b.ts', 'src/core/c.ts']);
    assert.deepEqual(
      cycles([
        { from: 'a', to: 'b', typeOnly: true },
        { from: 'b', to: 'a', typeOnly: false },
      ]),
      [['a', 'b', 'a']],
    );
  });
});
