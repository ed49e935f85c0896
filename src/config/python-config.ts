import { ConfigurationError } from './configuration-error';
import { type Environment, readBoolean, readPositiveNumber, readString } from './environment-values';

/** Isolation the python tool must get (same values as the tool's `isolation` option). */
export type PythonIsolationSetting = 'auto' | 'namespaces' | 'rlimits-only';

/**
 * Settings of the `python` tool, read by {@link loadPythonConfig}. The field names match
 * `PythonToolOptions`, so `createPythonTool(loadPythonConfig())` wires it.
 */
export interface PythonConfig {
  /** Interpreter: a name on the worker's PATH or a path (e.g. a venv's `bin/python`). `REACT_AGENT_PYTHON`; default `python3`. */
  pythonExecutable: string;
  /** Wall-clock limit per call, in seconds (the CPU limit follows: two thirds of it). `REACT_AGENT_PYTHON_TIMEOUT_SECONDS`; default 30. */
  wallTimeSeconds: number;
  /** Address space per process, in bytes, from `REACT_AGENT_PYTHON_MEMORY_MB` (mebibytes); default 1024 MB (1 GiB). */
  memoryBytes: number;
  /**
   * The bytes a call may keep in `/sandbox` and `/tmp` together, from
   * `REACT_AGENT_PYTHON_MAX_WRITE_MB` (mebibytes, at least 1); default 256 MB. A tmpfs (memory)
   * at the namespace levels; measured on disk and killed past it with rlimits only.
   */
  maxWriteBytes: number;
  /**
   * `REACT_AGENT_PYTHON_ISOLATION`: `auto` (default; the strongest available: bubblewrap, then
   * unshare, then resource limits only), `namespaces` (the worker fails at start unless
   * bubblewrap or unshare works) or `rlimits-only`.
   */
  isolation: PythonIsolationSetting;
  /** Each python call waits for approval before it runs. `REACT_AGENT_PYTHON_REQUIRES_APPROVAL` (`true`/`false`); default false. */
  requiresApproval: boolean;
}

export const DEFAULT_PYTHON_EXECUTABLE = 'python3';
export const DEFAULT_PYTHON_TIMEOUT_SECONDS = 30;
export const DEFAULT_PYTHON_MEMORY_MB = 1024;
export const DEFAULT_PYTHON_MAX_WRITE_MB = 256;
const ISOLATION_SETTINGS: readonly PythonIsolationSetting[] = ['auto', 'namespaces', 'rlimits-only'];

/**
 * Reads the python tool's settings from the environment.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable when a value is malformed.
 */
export function loadPythonConfig(environment: Environment = process.env): PythonConfig {
  const memoryMegabytes = readPositiveNumber(environment, 'REACT_AGENT_PYTHON_MEMORY_MB', DEFAULT_PYTHON_MEMORY_MB);
  if (memoryMegabytes < 64) {
    throw new ConfigurationError(
      'REACT_AGENT_PYTHON_MEMORY_MB',
      `REACT_AGENT_PYTHON_MEMORY_MB must be at least 64 (python itself needs that much address space), got ${memoryMegabytes}`,
    );
  }
  const maxWriteMegabytes = readPositiveNumber(
    environment,
    'REACT_AGENT_PYTHON_MAX_WRITE_MB',
    DEFAULT_PYTHON_MAX_WRITE_MB,
  );
  if (maxWriteMegabytes < 1) {
    throw new ConfigurationError(
      'REACT_AGENT_PYTHON_MAX_WRITE_MB',
      `REACT_AGENT_PYTHON_MAX_WRITE_MB must be at least 1 (the program itself is written there), got ${maxWriteMegabytes}`,
    );
  }
  return {
    pythonExecutable: readString(environment, 'REACT_AGENT_PYTHON') ?? DEFAULT_PYTHON_EXECUTABLE,
    wallTimeSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_PYTHON_TIMEOUT_SECONDS',
      DEFAULT_PYTHON_TIMEOUT_SECONDS,
    ),
    memoryBytes: Math.round(memoryMegabytes * 1024 * 1024),
    maxWriteBytes: Math.round(maxWriteMegabytes * 1024 * 1024),
    isolation: readIsolation(environment),
    requiresApproval: readBoolean(environment, 'REACT_AGENT_PYTHON_REQUIRES_APPROVAL', false),
  };
}

function readIsolation(environment: Environment): PythonIsolationSetting {
  const raw = readString(environment, 'REACT_AGENT_PYTHON_ISOLATION');
  if (raw === undefined) return 'auto';
  const value = raw.toLowerCase();
  if ((ISOLATION_SETTINGS as readonly string[]).includes(value)) return value as PythonIsolationSetting;
  throw new ConfigurationError(
    'REACT_AGENT_PYTHON_ISOLATION',
    `REACT_AGENT_PYTHON_ISOLATION must be one of ${ISOLATION_SETTINGS.join(', ')}, got ${JSON.stringify(raw)}`,
  );
}
