import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, sep } from 'node:path';
import { IsolationUnavailableError } from './isolation-unavailable-error';

/** A python interpreter as the sandbox needs to know it. */
export interface PythonInstallation {
  /** The executable as configured, e.g. `python3` or `/opt/venv/bin/python`. */
  configured: string;
  /** Absolute path of the interpreter (`sys.executable`), which the sandbox runs directly (no shims). */
  executable: string;
  /** `sys.version`'s first word, e.g. `3.11.7`. */
  version: string;
  /**
   * Host directories the interpreter reads: its prefixes, the directory of its real executable and
   * the directories on `sys.path`. Outermost only (no directory inside another one of the list).
   */
  directories: string[];
  /** Flags that keep the interpreter from reading environment variables and user site-packages. */
  isolationFlags: string[];
}

const PROBE_SCRIPT = [
  'import json, os, sys',
  'paths = [sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", sys.prefix), getattr(sys, "base_exec_prefix", sys.exec_prefix)]',
  'paths += [os.path.dirname(os.path.realpath(sys.executable))] + [p for p in sys.path if p]',
  'print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0], "paths": paths}))',
].join('\n');

/** Keeps the existing directories (resolving symlinks too) and drops those inside another one. */
export function outermostDirectories(paths: readonly string[]): string[] {
  const directories = new Set<string>();
  for (const path of paths) {
    if (!isAbsolute(path) || !existsSync(path)) continue;
    for (const candidate of [path, realpathSync(path)]) {
      if (statSync(candidate).isDirectory()) directories.add(candidate.replace(/\/+$/, '') || '/');
    }
  }
  const sorted = [...directories].sort((a, b) => a.length - b.length);
  return sorted.filter((directory, index) => !sorted.slice(0, index).some((outer) => isInside(directory, outer)));
}

/** True when `path` is `directory` or inside it. */
export function isInside(path: string, directory: string): boolean {
  return directory === '/' || path === directory || path.startsWith(directory + sep);
}

/**
 * Asks the configured interpreter (run on the host with the worker's environment, so pyenv or
 * asdf shims resolve) where it lives. Runs once when the tool is created.
 * @throws IsolationUnavailableError when the interpreter cannot be run.
 */
export function resolvePythonInstallation(configured: string): PythonInstallation {
  const problems: string[] = [];
  for (const isolationFlags of [['-I'], ['-E', '-s']]) {
    const probe = spawnSync(configured, [...isolationFlags, '-c', PROBE_SCRIPT], { encoding: 'utf8', timeout: 20_000 });
    if (probe.error) {
      problems.push(probe.error.message);
      break;
    }
    if (probe.status !== 0) {
      problems.push(probe.stderr.trim() || `exit code ${probe.status}`);
      continue;
    }
    const facts = JSON.parse(probe.stdout) as { executable: string; version: string; paths: string[] };
    if (!facts.executable || !isAbsolute(facts.executable)) {
      problems.push(`it does not report its own path (sys.executable is ${JSON.stringify(facts.executable)})`);
      break;
    }
    return {
      configured,
      executable: facts.executable,
      version: facts.version,
      directories: outermostDirectories([...facts.paths, dirname(facts.executable)]),
      isolationFlags,
    };
  }
  throw new IsolationUnavailableError(
    `The python tool cannot run the interpreter ${JSON.stringify(configured)}: ${problems.join('; ')}. ` +
      'Install python 3 or set REACT_AGENT_PYTHON to the path of an interpreter.',
  );
}
