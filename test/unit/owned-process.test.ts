import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from '@jest/globals';
import { OwnedProcess } from '../../src/processes/owned-process';

const root = resolve(__dirname, '../..');

function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await delay(50);
  }
  return true;
}

/** `sh` that starts a `sleep` of its own and prints the sleep's pid: a process with a child in its group. */
const shellWithChild = ['-c', 'sleep 60 & echo $!; wait'];

async function firstLine(owned: OwnedProcess): Promise<string> {
  let output = '';
  owned.child.stdout?.on('data', (data: Buffer) => (output += data.toString()));
  await until(() => output.includes('\n'));
  return output.split('\n')[0] as string;
}

describe('OwnedProcess', () => {
  test("runs in a process group of its own, so a terminal's Ctrl-C to the CLI's group does not reach it", async () => {
    const owned = OwnedProcess.spawn('/bin/sh', shellWithChild, { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const grandchild = Number(await firstLine(owned));
      assert.equal(processGroupOf(owned.pid as number), owned.pid);
      assert.notEqual(processGroupOf(owned.pid as number), processGroupOf(process.pid));
      assert.equal(processGroupOf(grandchild), owned.pid, 'what it starts shares its group');
    } finally {
      owned.killNow();
    }
  });

  test('killNow kills the whole group, what the process started included', async () => {
    const owned = OwnedProcess.spawn('/bin/sh', shellWithChild, { stdio: ['ignore', 'pipe', 'ignore'] });
    const grandchild = Number(await firstLine(owned));
    owned.killNow();
    const info = await owned.exited;
    assert.equal(info.signal, 'SIGKILL');
    assert.equal(await until(() => !isAlive(grandchild)), true, 'the child it started is gone too');
    assert.equal(owned.running, false);
  });

  test('stop sends SIGTERM first and SIGKILLs the group only after the grace time', async () => {
    const owned = OwnedProcess.spawn(
      '/bin/sh',
      ['-c', "trap 'echo term' TERM; echo ready; while :; do sleep 0.1; done"],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let output = '';
    owned.child.stdout?.on('data', (data: Buffer) => (output += data.toString()));
    await until(() => output.includes('ready'));
    const started = Date.now();
    const info = await owned.stop(700);
    assert.match(output, /term/, 'it got SIGTERM');
    assert.equal(info.signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 600, 'SIGKILL only after the grace time');
  });

  test('dies with its owner even when the owner is SIGKILLed (no exit handlers run)', async () => {
    const script = `const { OwnedProcess } = require(${JSON.stringify(resolve(root, 'src/processes/owned-process.ts'))});
      const owned = OwnedProcess.spawn('/bin/sh', ['-c', 'sleep 60 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
      owned.child.stdout.on('data', (data) => process.stdout.write(owned.pid + ' ' + data.toString()));`;
    const owner = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    owner.stdout.on('data', (data: Buffer) => (output += data.toString()));
    assert.equal(await until(() => /^\d+ \d+\n/.test(output)), true, `owner printed ${JSON.stringify(output)}`);
    const [ownedPid, grandchild] = output.trim().split(' ').map(Number) as [number, number];
    owner.kill('SIGKILL');
    assert.equal(
      await until(() => !isAlive(ownedPid) && !isAlive(grandchild)),
      true,
      'the watchdog killed the owned process and its child',
    );
  }, 30_000);
});
