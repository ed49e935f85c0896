import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PROJECT_SEARCH_ATTRIBUTES } from '../core/search-attributes';
import { logSize, logTextSince } from './log-tail';
import { OwnedProcess } from './owned-process';
import { findFreePort, waitUntilPortsFree } from './ports';
import { NotReadyError, waitUntilReady } from './readiness';
import { checkSearchAttributes, INDEXED_VALUE_TYPES } from './search-attribute-types';
import { startDevArguments, startDevListeners } from './start-dev-arguments';
import { PROJECT_ROOT, resolveTemporalCli } from './temporal-cli';

export { findFreePort, isPortFree } from './ports';
export { INDEXED_VALUE_TYPES, type SearchAttributeType } from './search-attribute-types';
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
    /**
     * What the server wrote while this start was tried (its last 64 KiB): a Go panic's first line
     * is often more than the message's last lines above its stack. Empty when it never ran.
     */
    readonly startOutput = '',
  ) {
    super(message);
  }
}

/** How often a start that lost a race for a port it picked is tried with new ports. */
const START_ATTEMPTS = 3;

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
  /** `http://127.0.0.1:METRICS_PORT/metrics`: the server's Prometheus metrics (requests by operation, ...). */
  readonly metricsUrl: string;

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
    settings: {
      address: string;
      uiUrl?: string;
      databaseFile: string;
      logFile: string;
      namespace: string;
      metricsUrl: string;
    },
  ) {
    this.address = settings.address;
    this.metricsUrl = settings.metricsUrl;
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
    checkSearchAttributes(searchAttributes);
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
      const ports = { grpc: port, ui: uiPort, http: await findFreePort(), metrics: await findFreePort() };
      const args = startDevArguments({
        databaseFile,
        host: HOST,
        ports,
        namespace,
        searchAttributes,
        dynamicConfig: options.dynamicConfig ?? {},
      });
      const server = new DevServer(
        temporalCli,
        args,
        startDevListeners(ports),
        searchAttributes,
        options.startTimeoutMs ?? 60_000,
        {
          address: `${HOST}:${port}`,
          ...(uiPort === undefined ? {} : { uiUrl: `http://${HOST}:${uiPort}` }),
          databaseFile,
          logFile,
          namespace,
          metricsUrl: `http://${HOST}:${ports.metrics}/metrics`,
        },
      );
      try {
        await server.launch(0);
        return server;
      } catch (error) {
        if (!isTransientStartError(error) || attempt >= START_ATTEMPTS) throw error;
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
    const inUse = await waitUntilPortsFree(
      this.ports.map(({ port }) => port),
      portWaitMs,
      200,
    );
    const taken = this.ports.find(({ port }) => port === inUse);
    if (taken !== undefined) {
      throw new DevServerStartError(
        `Cannot start the Temporal dev server: ${taken.name} ${taken.port} on ${HOST} is already in use` +
          (taken.name === 'gRPC port'
            ? ' (is another Temporal server running there? Stop it or choose another port).'
            : '.'),
        this.logFile,
      );
    }

    const logOffset = logSize(this.logFile);
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

    try {
      await waitUntilReady({
        what: `The Temporal dev server (${this.temporalCli} ${this.args.slice(0, 2).join(' ')}, ${this.address}, database ${this.databaseFile})`,
        probe: (remainingMs) => this.probe(Math.min(remainingMs, 3000)),
        timeoutMs: this.startTimeoutMs,
        intervalMs: 200,
        process: running.readiness(this.logFile, logOffset),
      });
    } catch (error) {
      if (!(error instanceof NotReadyError)) throw error;
      await this.kill();
      throw new DevServerStartError(error.message, this.logFile, logTextSince(this.logFile, logOffset));
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

/**
 * Whether `error` is a {@link DevServerStartError} worth trying again: {@link isTransientStartFailure}
 * of its message and of all the server wrote while starting (a panic's stack can push its first
 * line out of the message's last lines).
 */
export function isTransientStartError(error: unknown): boolean {
  return error instanceof DevServerStartError && isTransientStartFailure(`${error.message}\n${error.startOutput}`);
}
