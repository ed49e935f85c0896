import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpCallResult } from './mcp-call-result';
import { McpCallError, sendFailedBeforeServer } from './mcp-failures';
import { describeServer, type McpServerSettings } from './mcp-server-settings';
import { TaskSlots } from '../../../src/core/task-slots';
import { SecretRedactor } from '../../../src/domain/secret-redaction';

/** JSON-RPC codes the SDK makes up on this side: the connection closed, the request timed out. */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;
/** How much of a server's stderr is kept for messages. */
const STDERR_TAIL_CHARACTERS = 2_000;

export interface McpConnectionOptions {
  /** Lines for the worker's log (already free of secrets). */
  log: (line: string) => void;
  /** Waits before restarting a stdio server that exited, one per restart in a row (the last repeats). */
  restartDelaysMs?: number[];
  /** Longest wait for a server to start and answer `initialize`. Default 60 s. */
  startTimeoutMs?: number;
  /** Longest wait, inside a call, for a server being (re)started. Default 20 s. */
  reconnectWaitMs?: number;
  /** The name and version this client gives servers. */
  clientInfo?: { name: string; version: string };
}

/** A server could not be started or did not answer `initialize`; the message names it and ends with its stderr. */
export class McpServerStartError extends Error {
  override readonly name = 'McpServerStartError';
  constructor(
    readonly server: string,
    message: string,
  ) {
    super(message);
  }
}

/** A JSON-RPC error the server answered a call with (not a transport failure): an observation for the model. */
export class McpServerAnswerError extends Error {
  override readonly name = 'McpServerAnswerError';
}

/** What a call reports while it runs. */
export interface CallObserver {
  /** The request is being handed to the transport: from here on it may reach the server. */
  onSending?: () => void;
  /** The server reported progress. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** Keeps the last characters of a stream. */
class Tail {
  private text = '';
  append(chunk: string): void {
    this.text = (this.text + chunk).slice(-STDERR_TAIL_CHARACTERS);
  }
  toString(): string {
    return this.text;
  }
  clear(): void {
    this.text = '';
  }
}

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

/**
 * One MCP server, connected through the official SDK and supervised for the worker's life: a
 * stdio server is started as a child process (its stderr kept, its environment only the SDK's
 * few safe variables plus the configured `env`) and restarted with backoff when it exits; a
 * Streamable HTTP server is reconnected (a fresh `initialize`) by the next call after its
 * connection or session was lost. Calls wait for a free slot (`maxConcurrentCalls`), pass the
 * activity's abort signal to the SDK (which then sends `notifications/cancelled`), and fail with
 * an `McpCallError` that says whether the request can have reached the server.
 */
export class McpServerConnection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<Client> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private consecutiveRestarts = 0;
  private connectedAt = 0;
  private closed = false;
  private readonly stderr = new Tail();
  private readonly slots: TaskSlots;
  private readonly redactor: SecretRedactor;
  private readonly waiters = new Set<() => void>();
  /** In-flight calls by their arguments object (the SDK passes it on by reference), for the send hook. */
  private readonly inFlight = new WeakMap<object, CallObserver & { sendError?: unknown }>();
  /** How often the server was restarted since the worker started. */
  restarts = 0;

  private constructor(
    readonly settings: McpServerSettings,
    private readonly options: McpConnectionOptions,
  ) {
    this.slots = new TaskSlots(settings.maxConcurrentCalls ?? Number.POSITIVE_INFINITY);
    this.redactor = new SecretRedactor(settings.secrets);
  }

  /**
   * Starts (stdio) or reaches (HTTP) the server and completes MCP's `initialize`.
   * @throws McpServerStartError naming the server, what failed and the tail of its stderr.
   */
  static async start(settings: McpServerSettings, options: McpConnectionOptions): Promise<McpServerConnection> {
    const connection = new McpServerConnection(settings, options);
    try {
      await connection.connect();
    } catch (error) {
      await connection.close();
      await delay(50); // the last stderr lines of a server that exited at once
      const tail = connection.stderrTail().trim();
      throw new McpServerStartError(
        settings.name,
        `MCP server "${settings.name}" (${describeServer(settings)}) did not start: ${connection.redact((error as Error).message)}` +
          (tail
            ? `\n  its stderr ended with:\n    ${tail.split('\n').slice(-12).join('\n    ')}`
            : settings.transport === 'stdio'
              ? ' (it wrote nothing to stderr)'
              : ''),
      );
    }
    return connection;
  }

  get name(): string {
    return this.settings.name;
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /** The last characters the stdio server wrote to stderr, secrets redacted. */
  stderrTail(): string {
    return this.redact(this.stderr.toString());
  }

  /**
   * The server's `${VAR}` values (literal, encoded, reversed or spaced out: `src/domain/secret-redaction.ts`)
   * and any URL's credentials, taken out of `text`.
   */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  /** {@link redact} over every string of plain data (a tool's input schema). */
  redactValue<T>(value: T): T {
    return this.redactor.redactValue(value);
  }

  /** Every tool the server lists (all pages). */
  async listTools(): Promise<Tool[]> {
    const client = await this.ready(undefined, this.options.startTimeoutMs ?? 60_000);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.options.startTimeoutMs ?? 60_000 });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Calls a tool. Resolves with the server's result (including `isError` results); rejects with
   * `McpCallError` (transport, timeout), `McpServerAnswerError` (a JSON-RPC error answer) or the
   * signal's reason when aborted — then the SDK has sent `notifications/cancelled`.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number } & CallObserver,
  ): Promise<McpCallResult> {
    const release = await this.slots.acquire(options.signal);
    try {
      const client = await this.ready(
        options.signal,
        Math.min(options.timeoutMs, this.options.reconnectWaitMs ?? 20_000),
      );
      // A fresh object per call: the send hook recognises the request by it.
      const argumentsObject = { ...args };
      const observer: CallObserver & { sendError?: unknown } = {
        ...(options.onSending ? { onSending: options.onSending } : {}),
      };
      this.inFlight.set(argumentsObject, observer);
      try {
        return (await client.callTool({ name: tool, arguments: argumentsObject }, undefined, {
          signal: options.signal,
          timeout: options.timeoutMs,
          ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        })) as McpCallResult;
      } catch (error) {
        if (options.signal.aborted) throw options.signal.reason ?? error;
        throw this.classify(error, observer, client, tool, options.timeoutMs);
      } finally {
        this.inFlight.delete(argumentsObject);
      }
    } finally {
      release();
    }
  }

  /** Stops supervising and closes the connection (a stdio server gets EOF, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const wake of this.waiters) wake();
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    if (!client) await this.transport?.close().catch(() => undefined);
  }

  private classify(
    error: unknown,
    observer: { sendError?: unknown },
    client: Client,
    tool: string,
    timeoutMs: number,
  ): Error {
    const server = this.settings.name;
    if (observer.sendError !== undefined) {
      const notSent = sendFailedBeforeServer(observer.sendError, this.settings.transport);
      // The next call starts over with a fresh connection (a new session after a restart).
      if (this.settings.transport === 'http') this.drop(client);
      return new McpCallError(
        `MCP server "${server}" could not be sent the call of "${tool}": ${this.redact(String((observer.sendError as Error)?.message ?? observer.sendError))}.`,
        notSent ? 'not-sent' : 'sent',
        notSent ? 'unavailable' : 'connection-lost',
      );
    }
    const code = errorCode(error);
    if (code === REQUEST_TIMEOUT) {
      return new McpCallError(
        `MCP server "${server}" did not answer the call of "${tool}" within ${Math.round(timeoutMs / 1000)} s (timeoutSeconds); the server was told to cancel it.`,
        'sent',
        'timeout',
      );
    }
    if (code === CONNECTION_CLOSED) {
      return new McpCallError(
        `The connection to MCP server "${server}" closed while "${tool}" ran${this.settings.transport === 'stdio' ? ' (the server process exited)' : ''}.`,
        'sent',
        'connection-lost',
      );
    }
    if (typeof code === 'number') return new McpServerAnswerError(this.redact((error as Error).message));
    // Anything else (an answer that does not parse, a validation of structured content) is about the answer, not the transport.
    return new McpServerAnswerError(
      `MCP server "${server}" answered the call of "${tool}" with something this client could not read: ${this.redact((error as Error)?.message ?? String(error))}`,
    );
  }

  /** The connected client, waiting up to `waitMs` for a (re)start; throws a not-sent McpCallError otherwise. */
  private async ready(signal: AbortSignal | undefined, waitMs: number): Promise<Client> {
    const deadline = Date.now() + waitMs;
    let lastError: unknown;
    while (!this.client) {
      if (this.closed)
        throw new McpCallError(
          `MCP server "${this.name}" is shut down (the worker is stopping).`,
          'not-sent',
          'unavailable',
        );
      signal?.throwIfAborted();
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        const why = lastError
          ? `: ${this.redact((lastError as Error).message)}`
          : this.settings.transport === 'stdio'
            ? ' (it is being restarted)'
            : '';
        throw new McpCallError(`MCP server "${this.name}" is not available${why}.`, 'not-sent', 'unavailable');
      }
      // HTTP reconnects on demand; a stdio server restarts on its own schedule (or now, if none is set).
      if (!this.connecting && (this.settings.transport === 'http' || !this.restartTimer)) this.beginConnect();
      const wake = new Promise<void>((resolve) => this.waiters.add(resolve));
      const attempt = this.connecting?.then(
        () => undefined,
        (error: unknown) => {
          lastError = error;
        },
      );
      const timer = delay(remaining, undefined, { ...(signal ? { signal } : {}) }).catch(() => undefined);
      await Promise.race([wake, attempt ?? wake, timer]);
      if (lastError && this.settings.transport === 'http' && !this.client) {
        throw new McpCallError(
          `MCP server "${this.name}" is not reachable: ${this.redact((lastError as Error).message)}.`,
          'not-sent',
          'unavailable',
        );
      }
    }
    return this.client;
  }

  /** Connects in the background; a stdio server that fails to come up is tried again on the restart schedule. */
  private beginConnect(restart = false): void {
    this.connecting = this.connect().finally(() => {
      this.connecting = undefined;
    });
    this.connecting.then(
      () => {
        if (restart) this.options.log(`mcp ${this.name}: restarted (pid ${this.pid ?? '?'})`);
      },
      (error: unknown) => {
        if (!this.closed && this.settings.transport === 'stdio')
          this.scheduleRestart(`did not start again (${this.redact((error as Error).message)})`);
      },
    );
  }

  private createTransport(): Transport {
    const settings = this.settings;
    if (settings.transport === 'stdio') {
      this.stderr.clear();
      const transport = new StdioClientTransport({
        command: settings.command,
        args: settings.args,
        env: settings.env,
        ...(settings.cwd ? { cwd: settings.cwd } : {}),
        // Piped, never inherited: kept for messages, and the worker's own stderr stays the worker's.
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => this.stderr.append(chunk.toString()));
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(settings.url), { requestInit: { headers: settings.headers } });
  }

  /** Records, per call, that its request is being sent and whether sending failed. */
  private hookSend(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage, options?: Parameters<Transport['send']>[1]) => {
      const params = (message as { method?: string; params?: { arguments?: unknown } }).params;
      const observer =
        (message as { method?: string }).method === 'tools/call' &&
        typeof params?.arguments === 'object' &&
        params.arguments !== null
          ? this.inFlight.get(params.arguments)
          : undefined;
      observer?.onSending?.();
      try {
        await send(message, options);
      } catch (error) {
        if (observer) observer.sendError = error;
        throw error;
      }
    };
  }

  private async connect(): Promise<Client> {
    const transport = this.createTransport();
    this.hookSend(transport);
    const client = new Client(this.options.clientInfo ?? { name: 'durable-react-agent', version: '1' }, {
      capabilities: {},
    });
    // Transport errors also reject the calls they affect; here they are only kept from crashing the worker.
    client.onerror = () => undefined;
    client.onclose = () => this.onClosed(client);
    this.transport = transport;
    await client.connect(transport, { timeout: this.options.startTimeoutMs ?? 60_000 });
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new Error('the worker is stopping');
    }
    this.client = client;
    this.connectedAt = Date.now();
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    return client;
  }

  /** Forgets a client whose connection is no longer usable; the next call connects again. */
  private drop(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.onclose = undefined;
    void client.close().catch(() => undefined);
  }

  private onClosed(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.closed || this.settings.transport !== 'stdio') return;
    if (Date.now() - this.connectedAt > 60_000) this.consecutiveRestarts = 0;
    this.scheduleRestart('exited');
  }

  private scheduleRestart(what: string): void {
    const delays = this.options.restartDelaysMs ?? [500, 1_000, 2_000, 5_000, 10_000, 30_000];
    const wait = delays[Math.min(this.consecutiveRestarts, delays.length - 1)] ?? 1_000;
    this.consecutiveRestarts += 1;
    const tail = this.stderrTail().trim().split('\n').slice(-3).join(' | ');
    this.options.log(
      `mcp ${this.name}: the server ${what}; restarting it in ${(wait / 1000).toFixed(1)} s${tail ? ` (stderr: ${tail})` : ''}`,
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.closed) return;
      this.restarts += 1;
      this.beginConnect(true);
    }, wait);
    this.restartTimer.unref();
  }
}
