import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PROJECT_SEARCH_ATTRIBUTES } from '../core/search-attributes';
import { OwnedProcess, type ExitInfo } from './owned-process';
import { PROJECT_ROOT, resolveTemporalCli } from './temporal-cli';

/** Search-attribute types `temporal server start-dev --search-attribute` accepts. */
export type SearchAttributeType = 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

const SEARCH_ATTRIBUTE_TYPES: ReadonlySet<string> = new Set([
  'Text',
  'Keyword',
  'Int',
  'Double',
  'Bool',
  'Datetime',
  'KeywordList',
]);

export const INDEXED_VALUE_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Text: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

export { PROJECT_SEARCH_ATTRIBUTES };

/** The interface the dev server binds to. */
const HOST = '127.0.0.1';
/** How long {@link DevServer.stop} waits after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export interface DevServerOptions {
  /** SQLite file; its folder is created. Default: `<projectRoot>/.data/temporal.sqlite`. */
  databaseFile?: string;
  /** gRPC port. Default 7233. Pass 0 to pick a free port. */
  port?: number;
  /**
   * Web UI port; default port+1000 (a free port when `port` is 0); `false` = headless.
   * Pass 0 to pick a free port.
   */
  uiPort?: number | false;
  /** Search attributes to register (name to type). Default {@link PROJECT_SEARCH_ATTRIBUTES}. */
  searchAttributes?: Record<string, string>;
  /** Namespace to create and wait for (default 'default', which always exists). */
  namespace?: string;
  /** Where the server's stdout/stderr go (appended). Default: `<db folder>/temporal-server.log`. */
  logFile?: string;
  /** How long to wait for the server to accept connections, default 60 s. */
  startTimeoutMs?: number;
  /** Path of the `temporal` binary; default `resolveTemporalCli().path`. */
  temporalCli?: string;
  /** Dynamic configuration values (`--dynamic-config-value KEY=VALUE`, the value as JSON), e.g. shorter Worker Versioning drainage checks in tests. Default none. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/** Starting (or restarting) a dev server failed; the message ends with the last lines of its log. */
export class DevServerStartError extends Error {
  override readonly name = 'DevServerStartError';
  constructor(
    message: string,
    /** The server log file. */
    readonly logFile: string,
  ) {
    super(message);
  }
}

const recentlyIssuedPorts = new Set<number>();

/** Binds `port` (0 = any) on 127.0.0.1, releases it and returns the port number; rejects if it is taken. */
function bindAndRelease(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port, host: HOST, exclusive: true }, () => {
      const { port: bound } = server.address() as AddressInfo;
      server.close(() => resolvePort(bound));
    });
  });
}

/** How often a start that lost a race for a port it picked is tried with new ports. */
const START_ATTEMPTS = 3;

/** A TCP port on 127.0.0.1 that is free right now; never the same one twice within this process. */
export async function findFreePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = await bindAndRelease(0);
    if (!recentlyIssuedPorts.has(port)) {
      recentlyIssuedPorts.add(port);
      if (recentlyIssuedPorts.size > 4096) {
        const oldest = recentlyIssuedPorts.values().next().value;
        if (oldest !== undefined) recentlyIssuedPorts.delete(oldest);
      }
      return port;
    }
  }
  throw new Error('Could not find a free TCP port on 127.0.0.1');
}

export async function isPortFree(port: number): Promise<boolean> {
  try {
    await bindAndRelease(port);
    return true;
  } catch {
    return false;
  }
}

/**
 * True if a Temporal frontend answers `GetSystemInfo` at `address` (`host:port`) within `timeoutMs`.
 * Plaintext only (what a local dev server speaks).
 */
export async function isServerReachable(address: string, timeoutMs = 2000): Promise<boolean> {
  const connection = Connection.lazy({ address, connectTimeout: timeoutMs });
  try {
    await connection.ensureConnected();
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

function describeExit(info: ExitInfo): string {
  if (info.error !== undefined) return `could not be started (${info.error.message})`;
  if (info.signal !== null) return `was killed by ${info.signal}`;
  return `exited with code ${info.code}`;
}

/** The last `maxLines` non-empty lines written to `file` at or after byte `fromOffset`. */
function logTail(file: string, fromOffset: number, maxLines = 25): string {
  try {
    const size = statSync(file).size;
    const start = Math.max(fromOffset, size - 64 * 1024);
    const length = size - start;
    if (length <= 0) return '(the log is empty)';
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, start);
    } finally {
      closeSync(fd);
    }
    const lines = buffer
      .toString('utf8')
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '')
      .slice(-maxLines)
      .map((line) => (line.length > 600 ? `${line.slice(0, 600)}…` : line));
    return lines.length === 0 ? '(the log is empty)' : lines.join('\n');
  } catch (error) {
    return `(could not read the log: ${error instanceof Error ? error.message : String(error)})`;
  }
}

function validatePort(name: string, port: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`DevServer: ${name} must be an integer from 0 to 65535, got ${port}`);
}

/**
 * A local Temporal dev server (`temporal server start-dev`) run as a child process, with SQLite
 * persistence, bound to 127.0.0.1. It runs in its own process group (a terminal's Ctrl-C reaches
 * only the CLI, which stops it in order) and never outlives the Node process that started it
 * (see {@link OwnedProcess}).
 */
export class DevServer {
  /** `127.0.0.1:PORT` of the gRPC frontend. */
  readonly address: string;
  /** `http://127.0.0.1:UI_PORT` when not headless. */
  readonly uiUrl?: string;
  /** Absolute path of the SQLite database file. */
  readonly databaseFile: string;
  /** Absolute path of the server log (stdout and stderr, appended). */
  readonly logFile: string;
  /** Namespace the server was started with and waited for. */
  readonly namespace: string;

  private current: OwnedProcess | undefined;
  private stopping: Promise<void> | undefined;
  /** The database was there before this start: `start-dev` registers no attribute in it, so the missing ones are registered by {@link probe}. */
  private databaseExisted = false;

  private constructor(
    private readonly temporalCli: string,
    private readonly args: readonly string[],
    private readonly ports: readonly { name: string; port: number }[],
    private readonly searchAttributes: Readonly<Record<string, string>>,
    private readonly startTimeoutMs: number,
    settings: { address: string; uiUrl?: string; databaseFile: string; logFile: string; namespace: string },
  ) {
    this.address = settings.address;
    if (settings.uiUrl !== undefined) this.uiUrl = settings.uiUrl;
    this.databaseFile = settings.databaseFile;
    this.logFile = settings.logFile;
    this.namespace = settings.namespace;
  }

  /** Process id of the running server (of the last one after it exited). */
  get pid(): number {
    if (this.current === undefined) throw new Error('DevServer has no process');
    return this.current.pid ?? -1;
  }

  /** True while the server process has not exited. */
  get running(): boolean {
    return this.current !== undefined && this.current.running;
  }

  /**
   * Spawns `temporal server start-dev` and resolves once the frontend answers, the namespace
   * exists and the search attributes are listed.
   * @throws DevServerStartError (with the log tail) if a port is taken, the process exits early, or it is not ready in time.
   */
  static async start(options: DevServerOptions = {}): Promise<DevServer> {
    const databaseFile = resolve(options.databaseFile ?? join(PROJECT_ROOT, '.data', 'temporal.sqlite'));
    mkdirSync(dirname(databaseFile), { recursive: true });
    const logFile = resolve(options.logFile ?? join(dirname(databaseFile), 'temporal-server.log'));
    mkdirSync(dirname(logFile), { recursive: true });
    const namespace = options.namespace ?? 'default';
    const searchAttributes = options.searchAttributes ?? PROJECT_SEARCH_ATTRIBUTES;
    for (const [name, type] of Object.entries(searchAttributes)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        throw new TypeError(`DevServer: search attribute name ${JSON.stringify(name)} is not an identifier`);
      if (!SEARCH_ATTRIBUTE_TYPES.has(type)) {
        throw new TypeError(
          `DevServer: search attribute ${name} has type ${JSON.stringify(type)}; use one of ${[...SEARCH_ATTRIBUTE_TYPES].join(', ')}`,
        );
      }
    }
    const requestedPort = options.port ?? 7233;
    validatePort('port', requestedPort);
    const temporalCli = options.temporalCli ?? resolveTemporalCli().path;
    // Ports picked here are free when picked, but another process may bind one before the server
    // does; such a start is tried again with new ports (a port the caller chose is never changed).
    // A start the Go runtime itself crashed (see isTransientStartFailure) is tried again too.
    for (let attempt = 1; ; attempt += 1) {
      const port = requestedPort === 0 ? await findFreePort() : requestedPort;
      let uiPort: number | undefined;
      if (options.uiPort !== false) {
        if (options.uiPort !== undefined) validatePort('uiPort', options.uiPort);
        if (options.uiPort === undefined) uiPort = requestedPort === 0 ? await findFreePort() : port + 1000;
        else uiPort = options.uiPort === 0 ? await findFreePort() : options.uiPort;
      }
      const httpPort = await findFreePort();
      const metricsPort = await findFreePort();

      const args = [
        'server',
        'start-dev',
        '--db-filename',
        databaseFile,
        '--ip',
        HOST,
        '--port',
        String(port),
        '--http-port',
        String(httpPort),
        '--metrics-port',
        String(metricsPort),
        ...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]),
        ...(namespace === 'default' ? [] : ['--namespace', namespace]),
        ...Object.entries(searchAttributes).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
        ...Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => [
          '--dynamic-config-value',
          `${key}=${JSON.stringify(value)}`,
        ]),
        '--log-level',
        'warn',
      ];
      const ports = [
        { name: 'gRPC port', port },
        ...(uiPort === undefined ? [] : [{ name: 'UI port', port: uiPort }]),
        { name: 'HTTP port', port: httpPort },
        { name: 'metrics port', port: metricsPort },
      ];
      const server = new DevServer(temporalCli, args, ports, searchAttributes, options.startTimeoutMs ?? 60_000, {
        address: `${HOST}:${port}`,
        ...(uiPort === undefined ? {} : { uiUrl: `http://${HOST}:${uiPort}` }),
        databaseFile,
        logFile,
        namespace,
      });
      try {
        await server.launch(0);
        return server;
      } catch (error) {
        if (
          !(error instanceof DevServerStartError) ||
          !isTransientStartFailure(error.message) ||
          attempt >= START_ATTEMPTS
        )
          throw error;
      }
    }
  }

  /** SIGKILL the process (for crash tests); resolves when it has exited. */
  async kill(): Promise<void> {
    const running = this.current;
    if (running === undefined || !running.running) return;
    running.killNow();
    await running.exited;
  }

  /** Start again on the same ports and database file (stopping first if still running); resolves when ready. */
  async restart(): Promise<void> {
    if (this.running) await this.stop();
    await this.launch(10_000);
  }

  /** SIGTERM, then SIGKILL after 5 s; resolves when exited. Idempotent. */
  stop(): Promise<void> {
    const running = this.current;
    if (running === undefined || !running.running) return Promise.resolve();
    this.stopping ??= (async () => {
      await running.stop(STOP_GRACE_MS);
    })().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  /** Resolves when the current server process has exited (for a CLI that runs in the foreground). */
  async waitForExit(): Promise<void> {
    if (this.current !== undefined) await this.current.exited;
  }

  /**
   * Spawns the server and waits until it is ready.
   * @param portWaitMs How long to wait for the ports to become free (after a kill, for restart).
   */
  private async launch(portWaitMs: number): Promise<void> {
    const portDeadline = Date.now() + portWaitMs;
    for (const { name, port } of this.ports) {
      while (!(await isPortFree(port))) {
        if (Date.now() >= portDeadline) {
          throw new DevServerStartError(
            `Cannot start the Temporal dev server: ${name} ${port} on ${HOST} is already in use` +
              (name === 'gRPC port'
                ? ' (is another Temporal server running there? Stop it or choose another port).'
                : '.'),
            this.logFile,
          );
        }
        await sleep(200);
      }
    }

    const logOffset = (() => {
      try {
        return statSync(this.logFile).size;
      } catch {
        return 0;
      }
    })();
    this.databaseExisted = existsSync(this.databaseFile);
    const logFd = openSync(this.logFile, 'a');
    let running: OwnedProcess;
    try {
      running = OwnedProcess.spawn(this.temporalCli, this.args, {
        cwd: dirname(this.databaseFile),
        stdio: ['ignore', logFd, logFd],
      });
    } finally {
      closeSync(logFd);
    }
    this.current = running;

    const fail = async (reason: string): Promise<never> => {
      await this.kill();
      throw new DevServerStartError(
        `The Temporal dev server (${this.temporalCli} ${this.args.slice(0, 2).join(' ')}, ${this.address}, database ${this.databaseFile}) ${reason}. ` +
          `Last lines of ${this.logFile}:\n${logTail(this.logFile, logOffset)}`,
        this.logFile,
      );
    };

    const deadline = Date.now() + this.startTimeoutMs;
    let lastProblem = 'no answer yet';
    for (;;) {
      const exitInfo = running.exitInfo;
      if (exitInfo !== undefined) return fail(describeExit(exitInfo));
      const remaining = deadline - Date.now();
      if (remaining <= 0) return fail(`was not ready within ${this.startTimeoutMs} ms (last problem: ${lastProblem})`);
      const problem = await Promise.race([this.probe(Math.min(remaining, 3000)), running.exited.then(() => 'exited')]);
      if (problem === undefined) return;
      lastProblem = problem;
      await Promise.race([sleep(200), running.exited]);
    }
  }

  /**
   * Undefined when ready; otherwise what is still missing. `start-dev` registers its
   * `--search-attribute`s only in a new database: in one from before an attribute was added (a
   * project upgrade), the missing ones are registered here.
   */
  private async probe(timeoutMs: number): Promise<string | undefined> {
    const connection = Connection.lazy({ address: this.address, connectTimeout: timeoutMs });
    try {
      await connection.ensureConnected();
      return await connection.withDeadline(Date.now() + timeoutMs, async () => {
        await connection.workflowService.describeNamespace({ namespace: this.namespace });
        const names = Object.keys(this.searchAttributes);
        if (names.length === 0) return undefined;
        const response = await connection.operatorService.listSearchAttributes({ namespace: this.namespace });
        const registered = response.customAttributes ?? {};
        const missing = names.filter((name) => !(name in registered));
        if (missing.length === 0) return undefined;
        if (!this.databaseExisted) return `search attributes not registered yet: ${missing.join(', ')}`;
        await connection.operatorService.addSearchAttributes({
          namespace: this.namespace,
          searchAttributes: Object.fromEntries(
            missing.map((name) => [
              name,
              INDEXED_VALUE_TYPES[this.searchAttributes[name] as string] as temporal.api.enums.v1.IndexedValueType,
            ]),
          ),
        });
        return `search attributes not registered yet: ${missing.join(', ')}`;
      });
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      await connection.close().catch(() => undefined);
    }
  }
}

/**
 * Whether a failed start is worth trying again: the server lost a race for a port it was given
 * (`bind: address already in use`), or the Go runtime crashed while the server started (`fatal
 * error: concurrent map read and map write` and other `fatal error:`/`panic:` lines, an
 * intermittent fault of the temporal CLI reported upstream as temporalio/cli#212). A server that
 * was not ready in time, or exited with an ordinary error (a bad flag, an unusable database), is not.
 */
export function isTransientStartFailure(message: string): boolean {
  return /bind: address already in use/.test(message) || /^(fatal error|panic): /m.test(message);
}
