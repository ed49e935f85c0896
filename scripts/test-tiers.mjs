#!/usr/bin/env node
// `npm test`: the README's test command. Runs the checks and the test tiers one after another,
// stops at the first that fails, and prints each one's time beside it as it ends and in a table
// at the end, so a slow tier shows where it is:
//
//   typecheck, format, lint      the npm scripts of the same names (lint: `npm run lint`)
//   unit                         test/unit, files in parallel
//   workflow                     test/workflow: the real workflows on an in-process worker, files in parallel
//   integration                  test/integration: real processes, files two at a time, then the few
//                                that must run alone (scripts/integration-tier.mjs prints both groups' times)
//
//   node scripts/test-tiers.mjs                  (all, as npm test)
//   node scripts/test-tiers.mjs unit workflow    (only these, in this order)
//
// The exit status is the failing step's, 0 when all passed.
import { spawnSync } from 'node:child_process';

const STEPS = {
  typecheck: ['npm', ['run', '--silent', 'typecheck']],
  format: ['npm', ['run', '--silent', 'format:check']],
  lint: ['npm', ['run', '--silent', 'lint']],
  unit: ['npm', ['run', '--silent', 'test:unit']],
  workflow: ['npm', ['run', '--silent', 'test:workflow']],
  integration: ['npm', ['run', '--silent', 'test:integration']],
};

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in STEPS));
if (unknown.length > 0) {
  console.error(`test-tiers: no step ${unknown.join(', ')}; the steps are ${Object.keys(STEPS).join(', ')}`);
  process.exit(2);
}
const names = asked.length > 0 ? asked : Object.keys(STEPS);

/** 83.4 → "1 min 23 s", 4.2 → "4.2 s". */
function duration(seconds) {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

const times = [];
let failed;
const started = Date.now();
for (const name of names) {
  const [command, args] = STEPS[name];
  console.log(`\n── ${name} ──`);
  const stepStarted = Date.now();
  const { status, signal } = spawnSync(command, args, { stdio: 'inherit' });
  const seconds = (Date.now() - stepStarted) / 1000;
  const ok = status === 0;
  times.push({ name, seconds, ok });
  console.log(`── ${name}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${status}`})`} in ${duration(seconds)} ──`);
  if (!ok) {
    failed = status ?? 1;
    break;
  }
}

const width = Math.max(...names.map((name) => name.length));
console.log('\nnpm test, time per step:');
for (const { name, seconds, ok } of times)
  console.log(`  ${name.padEnd(width)}  ${duration(seconds).padStart(10)}  ${ok ? 'passed' : 'FAILED'}`);
for (const name of names.slice(times.length)) console.log(`  ${name.padEnd(width)}  ${'—'.padStart(10)}  not run`);
console.log(`  ${'total'.padEnd(width)}  ${duration((Date.now() - started) / 1000).padStart(10)}`);
process.exit(failed ?? 0);
