import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The machine-wide turn for the Temporal default port: a directory made with an atomic mkdir in
 * the system's temporary folder, holding the holder's pid. Shared by every test process on the
 * machine (two files of one tier, or two clones' tiers), since the port is too.
 */
const LOCK = join(tmpdir(), 'react-agent-test-port-7233.lock');

/** Whether the process that holds the turn is gone (a test process SIGKILLed while holding it). */
function holderIsGone(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // Being made or just released (look again), or its maker died between mkdir and the pid.
    try {
      return Date.now() - statSync(LOCK).mtimeMs > 10_000;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Runs `action` while this process has the turn for port 7233, the address the CLI starts its own
 * dev server on when `TEMPORAL_ADDRESS` is unset: the integration files that test that run beside
 * the others (each of which uses free ports), and take turns with each other only for these
 * tests. Waits for a turn at most `waitMs` (default 180 s).
 * @throws Error naming the lock and its holder when the wait runs out.
 */
export async function withDefaultTemporalPort<T>(action: () => Promise<T>, waitMs = 180_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holderIsGone()) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        let holder = 'unknown';
        try {
          holder = readFileSync(join(LOCK, 'pid'), 'utf8');
        } catch {
          // keep 'unknown'
        }
        throw new Error(`waited ${waitMs / 1000} s for the turn on port 7233 (${LOCK}, held by pid ${holder})`);
      }
      await delay(250);
    }
  }
  try {
    return await action();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
