import { tmpdir } from 'node:os';
import { ToolInputError, type ToolDefinition } from '../tool-definition';
import { createCallDirectory, removeCallDirectory } from './call-directory';
import { formatPythonObservation } from './python-observation';
import { writeQuotaEntries, type ResourceLimits } from './resource-limits';
import { runLimitedProcess } from './run-limited-process';
import { detectSandbox, WRITE_QUOTA_CHECK_MS, type IsolationRequirement, type Sandbox } from './sandbox';

/** How the python tool runs code. Every field is optional; the defaults are in `DEFAULT_PYTHON_TOOL_OPTIONS`. */
export interface PythonToolOptions {
  /** The interpreter: a name looked up on the worker's PATH (shims such as pyenv's are resolved once, at start) or a path, e.g. a venv's `bin/python`. Default `python3`. */
  pythonExecutable?: string;
  /** Wall-clock limit of one call, sandbox start included; the whole process tree is killed then. Default 30 s. */
  wallTimeSeconds?: number;
  /** CPU time per process (RLIMIT_CPU): SIGXCPU at this many seconds, SIGKILL one second later. Default two thirds of `wallTimeSeconds`, rounded up (20 s for the default 30 s). */
  cpuSeconds?: number;
  /** Address space per process (RLIMIT_AS); allocating more raises MemoryError. Default 1 GiB. */
  memoryBytes?: number;
  /** Bytes kept per stream (stdout, stderr); past this the program is killed and the observation says so. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Processes and threads of the sandbox's user (RLIMIT_NPROC), against fork bombs. Default 64. */
  maxProcesses?: number;
  /** Largest file the program may write (RLIMIT_FSIZE); writing more fails with "File too large". Default 64 MiB. */
  maxFileBytes?: number;
  /** Open file descriptors per process (RLIMIT_NOFILE). Default 1024. */
  maxOpenFiles?: number;
  /**
   * The bytes the program may keep in `/sandbox` and `/tmp` together (and one file or directory
   * per 4 KiB of it, at least 1024). unshare, and bubblewrap under a root worker: one tmpfs of
   * this size holds both, writing past it fails with "No space left on device"; bubblewrap under
   * a non-root worker: each is a tmpfs of this size; rlimits-only: the directories are on disk,
   * measured every 100 ms, and the program is killed past it. A tmpfs is memory, not disk.
   * Default 256 MiB.
   */
  maxWriteBytes?: number;
  /**
   * `auto` (default): the strongest isolation that works here (bubblewrap, then unshare, then
   * resource limits only). `namespaces`: bubblewrap or unshare, or `createPythonTool` throws
   * `IsolationUnavailableError` (the worker fails at start). `rlimits-only`: resource limits
   * only, no namespaces.
   */
  isolation?: IsolationRequirement;
  /** Let the program use the host's network (no new network namespace; resolv.conf and certificates visible). Default false. With `rlimits-only` the network is always reachable. */
  allowNetwork?: boolean;
  /** Every call waits for approval (`react-agent approve`) before it runs. Default false. */
  requiresApproval?: boolean;
  /** Where each call's private directory is created (and removed afterwards). Default the OS temporary directory. */
  temporaryDirectory?: string;
  /** Path or name of bubblewrap; `null` never uses it (unshare is tried next). Default `bwrap`, searched on the worker's PATH and the system directories. */
  bubblewrapExecutable?: string | null;
  /** Directories searched for bwrap, unshare, setpriv, prlimit, env and sh. Default /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin, then the worker's PATH. */
  systemToolDirectories?: readonly string[];
}

/** The defaults of `PythonToolOptions` (`cpuSeconds` follows `wallTimeSeconds` unless given). */
export const DEFAULT_PYTHON_TOOL_OPTIONS = {
  pythonExecutable: 'python3',
  wallTimeSeconds: 30,
  memoryBytes: 1024 ** 3,
  maxOutputBytes: 1024 ** 2,
  maxProcesses: 64,
  maxFileBytes: 64 * 1024 ** 2,
  maxOpenFiles: 1024,
  maxWriteBytes: 256 * 1024 ** 2,
  isolation: 'auto' as IsolationRequirement,
  allowNetwork: false,
  requiresApproval: false,
} as const;

/** The python tool with its options resolved, and the sandbox it runs in (for logs and tests). */
export type PythonTool = ToolDefinition & { readonly sandbox: Sandbox; readonly isolationDescription: string };

/**
 * The `python` tool (DeepResearch's PythonInterpreter): runs the model's code in a fresh
 * interpreter inside the strongest sandbox the machine offers, and returns stdout, stderr and
 * the exit status as the observation. The sandbox is detected here, once, so a worker whose
 * required isolation is missing fails at start.
 * @throws IsolationUnavailableError when `isolation` cannot be met or the interpreter cannot run.
 */
export function createPythonTool(options: PythonToolOptions = {}): PythonTool {
  const settings = { ...DEFAULT_PYTHON_TOOL_OPTIONS, ...withoutUndefined(options) };
  const cpuSeconds = options.cpuSeconds ?? Math.ceil((settings.wallTimeSeconds * 2) / 3);
  for (const [name, value] of Object.entries({ ...settings, cpuSeconds })) {
    if (typeof value === 'number' && !(Number.isFinite(value) && value > 0)) {
      throw new RangeError(`python tool option ${name} must be a positive number, got ${value}`);
    }
  }
  const limits: ResourceLimits = {
    memoryBytes: settings.memoryBytes,
    cpuSeconds,
    maxProcesses: settings.maxProcesses,
    maxFileBytes: settings.maxFileBytes,
    maxOpenFiles: settings.maxOpenFiles,
  };
  const temporaryDirectory = options.temporaryDirectory ?? tmpdir();
  const sandbox = detectSandbox(
    {
      pythonExecutable: settings.pythonExecutable,
      isolation: settings.isolation,
      ...(options.bubblewrapExecutable === undefined ? {} : { bubblewrapExecutable: options.bubblewrapExecutable }),
      ...(options.systemToolDirectories ? { systemToolDirectories: options.systemToolDirectories } : {}),
    },
    temporaryDirectory,
  );
  const observationLimits = {
    ...limits,
    wallTimeSeconds: settings.wallTimeSeconds,
    maxOutputBytes: settings.maxOutputBytes,
    maxWriteBytes: settings.maxWriteBytes,
  };
  const memory =
    settings.memoryBytes >= 1024 ** 3
      ? `${settings.memoryBytes / 1024 ** 3} GiB`
      : `${Math.round(settings.memoryBytes / 1024 ** 2)} MiB`;

  return {
    name: 'python',
    description:
      'Runs Python 3 code in an isolated sandbox and returns its stdout, stderr and exit status. ' +
      'Each call starts a fresh interpreter in an empty working directory; nothing persists between calls. ' +
      'Print every result you want to see with print(). ' +
      `${settings.allowNetwork ? 'The network is reachable.' : 'There is no network access.'} ` +
      `Limits: ${settings.wallTimeSeconds} s per call, ${memory} of memory.`,
    parameters: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'Python 3 source code, run as a script. Print what you want to see.' },
      },
      required: ['code'],
      additionalProperties: false,
    },
    requiresApproval: settings.requiresApproval,
    activity: { startToCloseSeconds: settings.wallTimeSeconds + 60, heartbeatSeconds: 10, maxAttempts: 2 },
    sandbox,
    isolationDescription: sandbox.describe({
      ...limits,
      wallTimeSeconds: settings.wallTimeSeconds,
      allowNetwork: settings.allowNetwork,
      writeQuotaBytes: settings.maxWriteBytes,
    }),

    async run(args, context) {
      const code = args.code;
      if (typeof code !== 'string' || code.trim() === '')
        throw new ToolInputError('python needs non-empty "code": the Python source to run.');
      context.signal.throwIfAborted();
      const user = sandbox.newCallUser();
      const directory = createCallDirectory(temporaryDirectory, code, user, sandbox.userSeenInside(user));
      try {
        const command = sandbox.command({
          directory,
          limits,
          allowNetwork: settings.allowNetwork,
          user,
          writeQuotaBytes: settings.maxWriteBytes,
        });
        const result = await runLimitedProcess({
          ...command,
          wallTimeMilliseconds: settings.wallTimeSeconds * 1000,
          maxOutputBytes: settings.maxOutputBytes,
          signal: context.signal,
          ...(command.watchedDirectories
            ? {
                writeQuota: {
                  directories: command.watchedDirectories,
                  maxBytes: settings.maxWriteBytes,
                  maxEntries: writeQuotaEntries(settings.maxWriteBytes),
                  everyMilliseconds: WRITE_QUOTA_CHECK_MS,
                },
              }
            : {}),
        });
        return formatPythonObservation(result, observationLimits, command.signalsAsExitCodes);
      } finally {
        sandbox.killLeftovers(user);
        await removeCallDirectory(directory);
      }
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
