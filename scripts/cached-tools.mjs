// What the setup scripts that keep builds in the user's cache share: where that cache is, and
// the link from the project's .tools/ to the cached build, and the lock that keeps two clones
// installing into the same cache at the same moment from breaking each other's install, and where
// a venv of pinned requirements is kept there.
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** $REACT_AGENT_CACHE_DIR, else $XDG_CACHE_HOME/react-agent, else ~/.cache/react-agent. */
export function cacheDirectory() {
  if (process.env.REACT_AGENT_CACHE_DIR) return process.env.REACT_AGENT_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'react-agent');
}

/** Points the symlink `link` at `target`, replacing a link (or anything else) that points elsewhere. */
export function pointLinkAt(link, target) {
  mkdirSync(dirname(link), { recursive: true });
  let current;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : 'not a link';
  } catch {
    current = undefined;
  }
  if (current !== target) {
    if (current !== undefined) rmSync(link, { recursive: true, force: true });
    symlinkSync(target, link);
  }
}

/** Blocks the (synchronous) setup script for `ms` milliseconds. */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether the process that holds `lock` is gone (or never wrote its pid and is older than 10 s). */
function lockIsStale(lock) {
  let pid;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

/**
 * Runs `action` while holding the cache lock `name` (a directory `<cache>/<name>.lock` made with
 * an atomic mkdir, holding the holder's pid), so two `npm ci` at the same moment on one machine
 * take turns: the second waits, then finds the first's install in place. A lock whose holder died
 * is taken over. The lock is released when `action` returns or the process exits (the setup
 * scripts end with `process.exit` when a tool is unavailable).
 */
export function withCacheLock(name, action) {
  mkdirSync(cacheDirectory(), { recursive: true });
  const lock = join(cacheDirectory(), `${name}.lock`);
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (lockIsStale(lock)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!announced) console.log(`Waiting for another setup that holds ${lock} ...`);
      announced = true;
      sleep(250);
    }
  }
  const release = () => rmSync(lock, { recursive: true, force: true });
  process.once('exit', release);
  try {
    return action();
  } finally {
    process.removeListener('exit', release);
    release();
  }
}

/**
 * Where a venv of `requirements` lives in the user cache, under `name`: a folder keyed by the
 * python3 version, the platform and the requirements, so a change of any of them makes a new one.
 * Undefined when python3 is not on PATH.
 * @returns {{ venv: string, python: string, pythonVersion: string } | undefined}
 */
export function cachedVenv(name, requirements) {
  const version = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  });
  if (version.status !== 0) return undefined;
  const pythonVersion = version.stdout.trim();
  const key = createHash('sha256')
    .update(`${pythonVersion}\n${process.platform}-${process.arch}\n${requirements}`)
    .digest('hex')
    .slice(0, 16);
  const venv = join(cacheDirectory(), name, `py${pythonVersion}-${key}`);
  return { venv, python: join(venv, 'bin', 'python'), pythonVersion };
}
