import { readFileSync } from 'node:fs';
// ESLint: the recommended JavaScript and typescript-eslint rules (not type-aware: a full type-aware run takes
// too long on two cores), with Prettier owning all formatting (eslint-config-prettier turns off anything
// stylistic), plus the floors of docs/architecture.md as import restrictions for editor-time feedback.
// The full floor check (every edge, type-only imports, cycles, packages) stays test/unit/import-graph.test.ts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import prettier from 'eslint-config-prettier';

/** Folders of each floor, as import-graph.test.ts names them; a relative import reaching one is matched by its path. */
// The floors (docs/architecture.md) from the one table test/unit/import-graph.test.ts also reads.
const FLOORS = JSON.parse(readFileSync(new URL('./test/unit/support/floors.json', import.meta.url), 'utf8'));
const FLOOR_FOLDERS = FLOORS.folders;

/** A relative specifier reaching a floor's folder: `../storage/x` (from inside src/) or `../../src/storage/x`. */
function reaching(floor) {
  const folder = FLOOR_FOLDERS[floor];
  const tail = folder.startsWith('src/') ? `(src/)?${folder.slice(4)}` : folder;
  return `^(\\.\\./)+${tail}(/|$)`;
}

/** The floors a floor may not import at run time: the complement of what the table allows (schemas/ is JSON, not linted). */
const FORBIDDEN = Object.fromEntries(
  Object.entries(FLOORS.allowed)
    .filter(([floor]) => floor !== 'schemas')
    .map(([floor, allowed]) => [
      floor,
      Object.keys(FLOOR_FOLDERS).filter((target) => target !== 'schemas' && !allowed.includes(target)),
    ]),
);

function floorRule(floor) {
  const patterns = FORBIDDEN[floor].map((target) => ({
    regex: reaching(target),
    message: `${FLOOR_FOLDERS[floor]}/ may not import ${FLOOR_FOLDERS[target]}/ (the floors: docs/architecture.md, test/unit/import-graph.test.ts).`,
  }));
  // Workflows see activities only as types (proxyActivities<typeof activities>): their code must stay out of the sandbox.
  if (floor === 'workflows')
    patterns.push({
      regex: reaching('activities'),
      allowTypeImports: true,
      message: 'workflows/ may import activities/ only with `import type`.',
    });
  // src/core is what workflows import, and src/domain is as pure: no Node built-ins, only workflow-safe packages.
  if (floor === 'core' || floor === 'domain')
    patterns.push({
      regex: `^(?!\\.|${FLOORS.workflowSafePackages.map((name) => name.replace(/[/.]/g, '\\$&') + '$').join('|')})`,
      message: `${FLOOR_FOLDERS[floor]}/ must stay workflow-safe: only ${FLOORS.workflowSafePackages.join(', ')} among packages, no node:* modules.`,
    });
  return {
    files: [`${FLOOR_FOLDERS[floor]}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  };
}

export default tseslint.config(
  { ignores: ['dist/', '.tools/', '.data/', 'coverage/', 'samples/clients/go/', 'test/fixtures/histories/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_` marks a binding kept on purpose (a parameter a signature requires, a field dropped by destructuring).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // A server's request handler is created before the instance it reads, which is assigned once the server listens.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Heavy modules (the AWS SDK, each CLI command) are loaded lazily with a typed `require()` so that commands
      // which never use them start fast; an `import()` would make those call sites asynchronous.
      '@typescript-eslint/no-require-imports': 'off',
      // The errors that rethrow a caught one fold its message into their own on purpose; attaching `cause` would
      // change what activities record as Temporal failures (a nested cause chain in history) and what the CLI prints.
      'preserve-caught-error': 'off',
    },
  },
  {
    // bin/ holds the CommonJS entry points Node runs directly.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // Fakes and client tests handle arbitrary JSON from the wire.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...Object.keys(FORBIDDEN).map(floorRule),
  prettier,
);
