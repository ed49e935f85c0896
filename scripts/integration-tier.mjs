#!/usr/bin/env node
// `npm run test:integration`: the integration tier (test/integration) in two groups, and the time of each.
//
//   together   every file not marked to run alone, three at a time (jest --maxWorkers=3). Each file
//              starts its own dev server, model server and workers on free ports, in its own temporary
//              folders, so two files never share a server, a port or a store. Most of a file's time is
//              spent waiting (retry backoff, timeouts, a worker's shutdown, a tool that sleeps): two files
//              at a time kept 0.8 of a core busy on average, three at a time 1.1 (of 2). The few tests
//              that need the fixed port 7233 (the CLI starting its own dev server) take turns for it
//              (test/integration/support/default-port-turn.ts).
//   alone      the files whose first line says `// Runs alone: <why>`, one at a time, after the others:
//              those that assert how soon something happens in seconds too few to hold while other
//              files start their servers.
//
//   node scripts/integration-tier.mjs                  (both groups, as npm test's integration step)
//   node scripts/integration-tier.mjs -t 'cancel'      (further arguments are passed to both jest runs)
//   node scripts/integration-tier.mjs test/integration/cli   (files whose path matches, each in its group)
//
// A group with no test left by the arguments is not an error. The exit status is the first failing
// group's, 0 when both passed.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const directory = join(root, 'test', 'integration');
const jest = createRequire(import.meta.url).resolve('jest/bin/jest');

/** Files that run together, at most this many at a time. */
const TOGETHER = 3;

/** `// Runs alone: <why>` among a file's first lines marks it for the alone group. */
const RUNS_ALONE = /^\/\/ Runs alone: (.+)$/m;

// Every file the project's testMatch (`test/integration/**/*.test.ts`) finds, so each is in one group.
const files = readdirSync(directory, { recursive: true })
  .filter((name) => name.endsWith('.test.ts'))
  .sort()
  .map((name) => {
    const path = join(directory, name);
    const reason = RUNS_ALONE.exec(readFileSync(path, 'utf8').slice(0, 2_000))?.[1];
    return { path: relative(root, path), reason };
  });
const together = files.filter((file) => file.reason === undefined).map((file) => file.path);
const alone = files.filter((file) => file.reason !== undefined);

/**
 * Each group is the project less the other group's files (`--testPathIgnorePatterns`, a path's dots
 * escaped and anchored at its end), so file patterns among the arguments narrow both groups.
 */
const leavingOut = (paths) => [
  '--testPathIgnorePatterns=/node_modules/',
  ...paths.map((path) => `--testPathIgnorePatterns=${path.replaceAll('.', '\\.')}$`),
];

/** 83.4 → "1 min 23 s", 4.2 → "4.2 s". */
function duration(seconds) {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

const extra = process.argv.slice(2);
const groups = [
  {
    name: `together (${together.length} files, ${TOGETHER} at a time)`,
    others: alone.map((file) => file.path),
    workers: [`--maxWorkers=${TOGETHER}`],
  },
  {
    name: `alone (${alone.length} files, 1 at a time)`,
    others: together,
    workers: ['--runInBand'],
  },
];
console.log('integration tier: files that run alone, after the others:');
for (const file of alone) console.log(`  ${file.path}: ${file.reason}`);

const times = [];
let failed;
for (const { name, others, workers } of groups) {
  console.log(`\n── integration, ${name} ──`);
  const started = Date.now();
  // The arguments go first: jest's list options (--selectProjects, --testPathIgnorePatterns) take the words after them.
  const args = [
    jest,
    ...extra,
    '--selectProjects',
    'integration',
    ...workers,
    '--passWithNoTests',
    ...leavingOut(others),
  ];
  const { status, signal } = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  const seconds = (Date.now() - started) / 1000;
  times.push({ name, seconds, ok: status === 0 });
  console.log(
    `── integration, ${name}: ${status === 0 ? 'passed' : `FAILED (${signal ?? `exit ${status}`})`} in ${duration(seconds)} ──`,
  );
  if (status !== 0) {
    failed = status ?? 1;
    break;
  }
}

console.log('\nintegration tier, time per group:');
for (const { name, seconds, ok } of times)
  console.log(`  ${name.padEnd(34)}  ${duration(seconds).padStart(10)}  ${ok ? 'passed' : 'FAILED'}`);
console.log(`  ${'total'.padEnd(34)}  ${duration(times.reduce((sum, { seconds }) => sum + seconds, 0)).padStart(10)}`);
process.exit(failed ?? 0);
