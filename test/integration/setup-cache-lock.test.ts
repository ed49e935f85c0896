import { describe, expect, test } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const cachedTools = pathToFileURL(resolve(__dirname, '../../scripts/cached-tools.mjs')).href;

/** A setup-like process: holds the cache lock `tool` while it writes `<id> start`, waits, writes `<id> end`. */
function setupProcess(cache: string, log: string, id: string, exitInside = false): Promise<number | null> {
  const script = `
    import { appendFileSync } from 'node:fs';
    import { withCacheLock } from ${JSON.stringify(cachedTools)};
    withCacheLock('tool', () => {
      appendFileSync(${JSON.stringify(log)}, '${id} start\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
      appendFileSync(${JSON.stringify(log)}, '${id} end\\n');
      if (${exitInside}) process.exit(0);
    });`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, REACT_AGENT_CACHE_DIR: cache },
      stdio: 'ignore',
    });
    child.on('exit', (code) => done(code));
  });
}

describe('the setup scripts cache lock', () => {
  test('two installs at the same moment take turns, and one that exits inside releases the lock', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'react-agent-cache-'));
    const log = join(cache, 'log');
    try {
      expect(await Promise.all([setupProcess(cache, log, 'a', true), setupProcess(cache, log, 'b')])).toEqual([0, 0]);
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(4);
      // Each holder's start is followed by its own end: the two never overlap.
      expect(lines[0]?.split(' ')[0]).toBe(lines[1]?.split(' ')[0]);
      expect(lines.map((line) => line.split(' ')[1])).toEqual(['start', 'end', 'start', 'end']);
      expect(existsSync(join(cache, 'tool.lock'))).toBe(false);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  test('a lock left by a process that died is taken over', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'react-agent-cache-'));
    const log = join(cache, 'log');
    try {
      const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
      mkdirSync(join(cache, 'tool.lock'));
      writeFileSync(join(cache, 'tool.lock', 'pid'), dead);
      expect(await setupProcess(cache, log, 'c')).toBe(0);
      expect(readFileSync(log, 'utf8')).toBe('c start\nc end\n');
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
