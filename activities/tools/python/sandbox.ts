import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { bubblewrapCommand } from './bubblewrap-command';
import { createCallDirectory, type CallDirectory, type UserIdentity } from './call-directory';
import { findExecutable, systemToolDirectoriesFrom } from './find-executable';
import { buildFilesystemPlan, SANDBOX_WORK_DIRECTORY } from './filesystem-plan';
import { withInheritedDescriptorsClosed } from './inherited-descriptors';
import { IsolationUnavailableError } from './isolation-unavailable-error';
import { resolvePythonInstallation, type PythonInstallation } from './python-installation';
import { countTasksOfUser, prlimitArguments, type ResourceLimits } from './resource-limits';
import { sharedWriteQuotaCommand } from './shared-write-quota';
import { unshareCommand } from './unshare-command';

/**
 * Which isolation the python tool must get: `auto` takes the strongest this machine offers,
 * `namespaces` fails at start unless bubblewrap or unshare works, `rlimits-only` never uses
 * namespaces (resource limits only).
 */
export type IsolationRequirement = 'auto' | 'namespaces' | 'rlimits-only';

/** What a call actually runs in: a bubblewrap sandbox, an unshare + chroot sandbox, or resource limits alone. */
export type IsolationLevel = 'bubblewrap' | 'unshare' | 'rlimits-only';

/** The choices that decide which sandbox a worker uses. */
export interface SandboxOptions {
  /** The interpreter, as configured (`python3`, a path, a venv's python). */
  pythonExecutable: string;
  isolation: IsolationRequirement;
  /** Path or name of bubblewrap; `null` never uses bubblewrap. Default `bwrap`, searched in `systemToolDirectories`. */
  bubblewrapExecutable?: string | null;
  /** Where bwrap, unshare, setpriv, prlimit, env, chroot and sh are looked for. Default: the standard system directories, then the worker's PATH. */
  systemToolDirectories?: readonly string[];
}

/** One call, as the sandbox needs to know it. */
export interface SandboxCall {
  directory: CallDirectory;
  limits: ResourceLimits;
  allowNetwork: boolean;
  /** The call's own unprivileged user when the worker runs as root (see `Sandbox.newCallUser`). */
  user: UserIdentity | undefined;
  /** The bytes the program may keep in `/sandbox` and `/tmp` together (see `PythonToolOptions.maxWriteBytes`). */
  writeQuotaBytes: number;
}

/** A process to start for one call; the environment is complete (the worker's is never passed on). */
export interface SandboxedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Start the process under this user (only when no setpriv is available to do it). */
  uid?: number;
  gid?: number;
  /** The launcher reports a signal death as exit code 128 + signal number (bubblewrap and the unshare setup shell do). */
  signalsAsExitCodes: boolean;
  /**
   * Host directories whose size the caller must watch against the write quota (rlimits-only:
   * no mount namespace, so no tmpfs holds the quota); undefined when the kernel enforces it.
   */
  watchedDirectories?: string[];
}

/** System tools the sandboxes are built from; each undefined when not installed. */
interface SystemTools {
  bubblewrap: string | undefined;
  bubblewrapSupportsDisableUserns: boolean;
  unshare: string | undefined;
  setpriv: string | undefined;
  prlimit: string | undefined;
  env: string | undefined;
  shell: string | undefined;
}

const RUNS_AS_ROOT = process.getuid?.() === 0;
/** Per-call uids, when the worker is root, come from this range (above what distributions hand out, below 2^31). */
const CALL_USER_RANGE = { from: 1_000_000_000, to: 2_000_000_000 } as const;
const PROBE_TIMEOUT_MS = 20_000;
const PROBE_LIMITS: ResourceLimits = {
  memoryBytes: 1024 ** 3,
  cpuSeconds: 10,
  maxProcesses: 64,
  maxFileBytes: 1024 ** 2,
  maxOpenFiles: 256,
};
const PROBE_WRITE_QUOTA_BYTES = 8 * 1024 ** 2;
/** With rlimits only, how often the private directories are measured against the write quota. */
export const WRITE_QUOTA_CHECK_MS = 100;

/** The sandbox a worker's python calls run in, chosen once by `detectSandbox`. */
export class Sandbox {
  constructor(
    readonly level: IsolationLevel,
    readonly python: PythonInstallation,
    private readonly tools: SystemTools,
    /** Why stronger levels were not used, one line each (empty when the strongest one works). */
    readonly unavailable: readonly string[],
  ) {}

  /** True when the worker is root, so every call runs as its own unprivileged uid. */
  get dropsToUnprivilegedUser(): boolean {
    return RUNS_AS_ROOT;
  }

  /** A fresh unprivileged uid/gid for one call when the worker is root (RLIMIT_NPROC then counts only that call); otherwise undefined. */
  newCallUser(): UserIdentity | undefined {
    if (!RUNS_AS_ROOT) return undefined;
    const id = randomInt(CALL_USER_RANGE.from, CALL_USER_RANGE.to);
    return { uid: id, gid: id };
  }

  /** The identity the program sees inside (for its synthetic /etc/passwd). */
  userSeenInside(user: UserIdentity | undefined): UserIdentity {
    if (user) return user;
    if (this.level === 'unshare') return { uid: 0, gid: 0 };
    return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  }

  /** The command that runs `call`'s program under this sandbox. */
  command(call: SandboxCall): SandboxedCommand {
    const { directory, limits, allowNetwork, user, writeQuotaBytes } = call;
    const tools = this.tools;
    const setpriv = tools.setpriv;
    const prlimit = required(tools.prlimit, 'prlimit');
    const insideNamespaces = this.level !== 'rlimits-only';
    const home = insideNamespaces ? SANDBOX_WORK_DIRECTORY : directory.workDirectory;
    const environment = programEnvironment(this.python, home, insideNamespaces ? '/tmp' : directory.temporaryDirectory);
    const programFile = insideNamespaces ? `${SANDBOX_WORK_DIRECTORY}/main.py` : directory.programFile;
    const nprocLimits =
      insideNamespaces || user
        ? limits
        : { ...limits, maxProcesses: limits.maxProcesses + countTasksOfUser(process.getuid?.() ?? 0) };
    const python = [
      prlimit,
      ...prlimitArguments(nprocLimits),
      '--',
      this.python.executable,
      ...this.python.isolationFlags,
      '-u',
      '-B',
      programFile,
    ];
    const dropToUser = (target: UserIdentity) => [
      required(setpriv, 'setpriv'),
      `--reuid=${target.uid}`,
      `--regid=${target.gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    ];
    const dropCapabilities = [
      required(setpriv, 'setpriv'),
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    ];
    const plan = () =>
      buildFilesystemPlan({
        pythonDirectories: this.python.directories,
        workDirectory: directory.workDirectory,
        temporaryDirectory: directory.temporaryDirectory,
        passwdFile: directory.passwdFile,
        groupFile: directory.groupFile,
        allowNetwork,
      });

    let argv: string[];
    let spawnUser: UserIdentity | undefined;
    switch (this.level) {
      case 'bubblewrap': {
        // A root worker can mount one tmpfs for both writable directories before bwrap starts.
        const shared = user !== undefined && tools.unshare !== undefined && tools.shell !== undefined;
        const bubblewrap = bubblewrapCommand({
          bubblewrap: required(tools.bubblewrap, 'bwrap'),
          plan: plan(),
          environment,
          allowNetwork,
          privileged: user !== undefined,
          disableNestedUserNamespaces: user === undefined && tools.bubblewrapSupportsDisableUserns,
          writeQuota: shared
            ? { kind: 'shared', writableMountPoint: directory.writableMountPoint }
            : { kind: 'each', bytes: writeQuotaBytes, programFile: directory.programFile },
          innerCommand: user ? [...dropToUser(user), ...python] : python,
        });
        argv = shared
          ? sharedWriteQuotaCommand({
              unshare: required(tools.unshare, 'unshare'),
              shell: required(tools.shell, 'sh'),
              writableMountPoint: directory.writableMountPoint,
              writeQuotaBytes,
              directories: [directory.workDirectory, directory.temporaryDirectory],
              command: bubblewrap,
            })
          : bubblewrap;
        break;
      }
      case 'unshare':
        argv = unshareCommand({
          unshare: required(tools.unshare, 'unshare'),
          shell: required(tools.shell, 'sh'),
          setpriv,
          newRootMountPoint: directory.newRootMountPoint,
          writableMountPoint: directory.writableMountPoint,
          writeQuotaBytes,
          plan: plan(),
          allowNetwork,
          privileged: user !== undefined,
          innerCommand: [
            required(tools.env, 'env'),
            '-C',
            SANDBOX_WORK_DIRECTORY,
            ...(user ? dropToUser(user) : dropCapabilities),
            ...python,
          ],
        });
        break;
      case 'rlimits-only':
        if (user && !setpriv) {
          spawnUser = user;
          argv = python;
        } else if (user) {
          argv = [...dropToUser(user).slice(0, -1), '--pdeathsig', 'KILL', '--', ...python];
        } else {
          argv = setpriv ? [setpriv, '--pdeathsig', 'KILL', '--no-new-privs', '--', ...python] : python;
        }
        break;
    }
    const [command, ...args] = withInheritedDescriptorsClosed(this.python.executable, argv);
    return {
      command: command as string,
      args,
      env: environment,
      cwd: insideNamespaces ? directory.path : directory.workDirectory,
      ...(spawnUser ? { uid: spawnUser.uid, gid: spawnUser.gid } : {}),
      signalsAsExitCodes: insideNamespaces,
      ...(insideNamespaces ? {} : { watchedDirectories: [directory.workDirectory, directory.temporaryDirectory] }),
    };
  }

  /**
   * Cleans up after a call. Inside namespaces the kernel already killed every process of the
   * call with the sandbox's pid 1; with rlimits only and a per-call uid, whatever the program
   * left running (daemonised children outside its process group) is killed here.
   */
  killLeftovers(user: UserIdentity | undefined): void {
    if (this.level !== 'rlimits-only' || !user) return;
    // `kill -1` as the call's own uid reaches exactly that uid's processes (never the caller itself).
    spawnSync(this.tools.shell ?? '/bin/sh', ['-c', 'kill -KILL -1 2>/dev/null; exit 0'], {
      uid: user.uid,
      gid: user.gid,
      env: {},
      timeout: 5_000,
    });
  }

  /** In words: what a call gets on this machine (for logs and the README). */
  describe(
    limits?: ResourceLimits & { wallTimeSeconds?: number; allowNetwork?: boolean; writeQuotaBytes?: number },
  ): string {
    const network = limits?.allowNetwork
      ? 'the host network (allowNetwork is on)'
      : 'no network (a new network namespace with only loopback)';
    const identity = RUNS_AS_ROOT
      ? 'each call runs as its own unprivileged uid with no capabilities (the worker is root)'
      : this.level === 'unshare'
        ? "the worker's uid mapped to root inside a user namespace, with every capability dropped"
        : "the worker's own uid inside a user namespace, with no capabilities";
    const filesystem =
      "the root is an empty tmpfs made read-only, with read-only binds of /usr, /bin, /sbin, /lib*, the interpreter's directories " +
      `(${this.python.directories.join(', ')}) and a few files of /etc (loader cache, alternatives, time zone), a synthetic /etc/passwd and /etc/group, ` +
      'a fresh /proc and minimal /dev, and a private writable /sandbox (working directory and HOME) and /tmp, both deleted after the call; ' +
      'home directories, the project, /var, /run, the rest of /etc and other processes are invisible';
    const resourceLimits = limits
      ? ` Limits per process: ${formatBytes(limits.memoryBytes)} address space, ${limits.cpuSeconds} s CPU, ${limits.maxProcesses} processes/threads, ` +
        `${formatBytes(limits.maxFileBytes)} per file, ${limits.maxOpenFiles} open files, no core dumps` +
        (limits.wallTimeSeconds ? `; ${limits.wallTimeSeconds} s wall clock for the whole call.` : '.')
      : '';
    const quota = limits?.writeQuotaBytes ? formatBytes(limits.writeQuotaBytes) : undefined;
    const writes = !quota
      ? ''
      : {
          bubblewrap: RUNS_AS_ROOT
            ? ` Writes: /sandbox and /tmp share one tmpfs of ${quota} (memory, not the host's disk).`
            : ` Writes: /sandbox and /tmp are each a tmpfs of ${quota} (memory, not the host's disk).`,
          unshare: ` Writes: /sandbox and /tmp share one tmpfs of ${quota} (memory, not the host's disk).`,
          'rlimits-only': ` Writes: the private directories are on the host's disk; their size is measured every ${WRITE_QUOTA_CHECK_MS} ms and the program killed past ${quota} in total.`,
        }[this.level];
    const notes = (this.unavailable.length ? ` (Not used: ${this.unavailable.join('; ')}.)` : '') + writes;
    const interpreter = `python ${this.python.version} at ${this.python.executable}`;
    switch (this.level) {
      case 'bubblewrap':
        return (
          `Python tool isolation: bubblewrap (${this.tools.bubblewrap}) with new pid, ipc, uts` +
          `${RUNS_AS_ROOT ? '' : ', user'} and mount namespaces and ${network}; ${filesystem}; ${identity}; ` +
          `the sandbox dies with the worker. Runs ${interpreter}.${resourceLimits}${notes}`
        );
      case 'unshare':
        return (
          `Python tool isolation: unshare (${this.tools.unshare}) with new mount, pid, ipc, uts${RUNS_AS_ROOT ? '' : ', user'} namespaces ` +
          `and ${network}, then chroot; ${filesystem}; ${identity}; the sandbox dies with the worker. Runs ${interpreter}.${resourceLimits}${notes}`
        );
      case 'rlimits-only':
        return (
          'Python tool isolation: RESOURCE LIMITS ONLY, no namespaces. The program sees the whole host filesystem with the permissions of ' +
          (RUNS_AS_ROOT
            ? 'its own unprivileged uid (the worker is root), so it can read world-readable files (/etc/passwd, world-readable parts of the project) but not write outside its private directories'
            : "the worker's own user, so it can read and write everything that user can (the project, the worker's /proc/<pid>/environ)") +
          ', can reach the network whatever allowNetwork says, and can see other processes. It gets a minimal environment and a private working directory deleted after the call. ' +
          `Runs ${interpreter}.${resourceLimits}${notes}`
        );
    }
  }
}

function required(path: string | undefined, name: string): string {
  if (!path) throw new Error(`${name} is needed by the python sandbox but was not found`);
  return path;
}

/** The program's whole environment: nothing of the worker's. */
export function programEnvironment(
  python: PythonInstallation,
  home: string,
  temporaryDirectory: string,
): Record<string, string> {
  const threads = String(Math.min(4, availableParallelism()));
  return {
    PATH: [...new Set([dirname(python.executable), '/usr/local/bin', '/usr/bin', '/bin'])].join(':'),
    HOME: home,
    TMPDIR: temporaryDirectory,
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    MPLBACKEND: 'Agg',
    // Numeric libraries start one thread per core otherwise, which the process limit counts.
    OMP_NUM_THREADS: threads,
    OPENBLAS_NUM_THREADS: threads,
    MKL_NUM_THREADS: threads,
  };
}

function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % (size / 4) === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes.toLocaleString('en-US')} bytes`;
}

function findSystemTools(options: SandboxOptions): SystemTools {
  const directories = options.systemToolDirectories ?? systemToolDirectoriesFrom(process.env.PATH);
  const bubblewrap =
    options.bubblewrapExecutable === null
      ? undefined
      : findExecutable(options.bubblewrapExecutable ?? 'bwrap', directories);
  let bubblewrapSupportsDisableUserns = false;
  if (bubblewrap) {
    const version = /(\d+)\.(\d+)/.exec(
      spawnSync(bubblewrap, ['--version'], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '',
    );
    bubblewrapSupportsDisableUserns = version !== null && (Number(version[1]) > 0 || Number(version[2]) >= 8);
  }
  return {
    bubblewrap,
    bubblewrapSupportsDisableUserns,
    unshare: findExecutable('unshare', directories),
    setpriv: findExecutable('setpriv', directories),
    prlimit: findExecutable('prlimit', directories),
    env: findExecutable('env', directories),
    shell: findExecutable('sh', directories),
  };
}

/** Tools each level needs; the first missing one is returned. */
function missingTool(level: IsolationLevel, tools: SystemTools): string | undefined {
  const needs: Record<IsolationLevel, Array<[keyof SystemTools, string]>> = {
    bubblewrap: [
      ['bubblewrap', 'bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)'],
      ['prlimit', 'prlimit (util-linux) is not installed'],
      ...(RUNS_AS_ROOT ? [['setpriv', 'setpriv (util-linux) is not installed'] as [keyof SystemTools, string]] : []),
    ],
    unshare: [
      ['unshare', 'unshare (util-linux) is not installed'],
      ['setpriv', 'setpriv (util-linux) is not installed'],
      ['prlimit', 'prlimit (util-linux) is not installed'],
      ['env', 'env (coreutils) is not installed'],
      ['shell', 'sh is not installed'],
    ],
    'rlimits-only': [['prlimit', 'prlimit (util-linux) is not installed']],
  };
  return needs[level].find(([tool]) => !tools[tool])?.[1];
}

/** Runs `print(...)` through `sandbox` once; returns undefined when it works, otherwise why not. */
function probe(sandbox: Sandbox, parent: string): string | undefined {
  const user = sandbox.newCallUser();
  const marker = 'python sandbox probe ok';
  const directory = createCallDirectory(
    parent,
    `print(${JSON.stringify(marker)})\n`,
    user,
    sandbox.userSeenInside(user),
  );
  try {
    const command = sandbox.command({
      directory,
      limits: PROBE_LIMITS,
      allowNetwork: false,
      user,
      writeQuotaBytes: PROBE_WRITE_QUOTA_BYTES,
    });
    const result = spawnSync(command.command, command.args, {
      cwd: command.cwd,
      env: command.env,
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      ...(command.uid === undefined ? {} : { uid: command.uid, gid: command.gid }),
    });
    if (result.error) return result.error.message;
    if (result.status === 0 && result.stdout.trim() === marker) return undefined;
    const stderr = result.stderr.trim().split('\n').slice(-3).join(' / ');
    return `${stderr || `exit code ${result.status ?? result.signal}`}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    sandbox.killLeftovers(user);
    rmSync(directory.path, { recursive: true, force: true });
  }
}

const detected = new Map<string, Sandbox>();

/**
 * The sandbox for `options`, detected once per worker (by running a probe through each level,
 * strongest first, that `options.isolation` allows) and then reused.
 * @throws IsolationUnavailableError when the required isolation (or the interpreter) is unavailable.
 */
export function detectSandbox(options: SandboxOptions, temporaryDirectory: string = tmpdir()): Sandbox {
  const key = JSON.stringify([options, temporaryDirectory]);
  const known = detected.get(key);
  if (known) return known;

  const python = resolvePythonInstallation(options.pythonExecutable);
  const tools = findSystemTools(options);
  const candidates: IsolationLevel[] =
    options.isolation === 'rlimits-only'
      ? ['rlimits-only']
      : options.isolation === 'namespaces'
        ? ['bubblewrap', 'unshare']
        : ['bubblewrap', 'unshare', 'rlimits-only'];
  const unavailable: string[] = [];
  for (const level of candidates) {
    const missing = missingTool(level, tools);
    if (missing) {
      unavailable.push(`${level}: ${missing}`);
      continue;
    }
    const sandbox = new Sandbox(level, python, tools, [...unavailable]);
    const problem = probe(sandbox, temporaryDirectory);
    if (problem === undefined) {
      detected.set(key, sandbox);
      return sandbox;
    }
    unavailable.push(`${level}: ${problem}`);
  }
  const hint =
    RUNS_AS_ROOT && candidates.includes('rlimits-only')
      ? ' With rlimits only and a root worker, each call runs as an unprivileged uid, so the interpreter must be readable and executable by other users (not under a 0700 /root).'
      : '';
  throw new IsolationUnavailableError(
    `The python tool needs isolation "${options.isolation}" but none of ${candidates.join(', ')} works here (${unavailable.join('; ')}).` +
      (options.isolation === 'namespaces'
        ? ' Install bubblewrap (apt-get install bubblewrap), allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or in Docker --security-opt seccomp=unconfined), or set REACT_AGENT_PYTHON_ISOLATION=rlimits-only to accept weaker isolation.'
        : '') +
      hint,
  );
}

/**
 * In words, what isolation the python tool gets on this machine with `options` (defaults: the
 * `python3` interpreter, `auto`), for logs and the README. Detects the sandbox if needed.
 */
export function describeIsolation(
  options: Partial<SandboxOptions> & {
    limits?: ResourceLimits & { wallTimeSeconds?: number; allowNetwork?: boolean; writeQuotaBytes?: number };
  } = {},
): string {
  const { limits, ...rest } = options;
  return detectSandbox({ pythonExecutable: 'python3', isolation: 'auto', ...rest }).describe(limits);
}
