import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  LIVE_TEXT_CONTENT_TYPE,
  LIVE_TEXT_PATH_PATTERN,
  RUN_TEXT_PATH_PATTERN,
  type LiveTextKind,
  type LiveTextPointer,
} from '../../src/domain/live-text';
import { DEFAULT_LIVE_TEXT_FLUSH_MS } from '../../src/domain/live-text-batching';
import { LiveTextCall, responseOutlet } from './live-text-call';
import { LiveTextRun, type RunCall } from './live-text-run';
import { RunTokens } from './run-token';

/** Settings of a worker's live text server; every limit has a default. */
export interface LiveTextServerOptions {
  /** Host to listen on. Default `127.0.0.1` (this machine only). */
  host?: string;
  /** Port; default 0 (any free one). */
  port?: number;
  /**
   * Base URL clients are given (`<base>/calls/<token>`), for a worker another machine reaches by
   * another name. Default `http://<host>:<port>` as listened on.
   */
  advertisedUrl?: string;
  /** Without `advertisedUrl`: the host name to advertise with the port listened on (default `host`). */
  advertisedHost?: string;
  /** Watchers of one call at once. Default 16. */
  maxWatchersPerCall?: number;
  /** Watchers of one run's stream at once. Default 16. */
  maxWatchersPerRun?: number;
  /**
   * How long a run is remembered after its last attempt here ended, in ms: its stream can be
   * opened until then, and its watchers' streams end then (they find the run's next attempt
   * elsewhere by describing it). Default 60,000.
   */
  runIdleMs?: number;
  /** Watchers on this worker at once (open connections, counted by the server). Default 512. */
  maxWatchers?: number;
  /** Characters each call keeps for late or slow watchers. Default 262,144. */
  bufferCharacters?: number;
  /** Longest wait for a request's headers, in ms (then the connection is closed). Default 5,000. */
  headersTimeoutMs?: number;
  /**
   * Pieces a call streams within this many ms go to its watchers in one write, adjacent pieces of
   * one kind as one line; the first piece after a quiet interval at once. Default
   * {@link DEFAULT_LIVE_TEXT_FLUSH_MS} (100); 0 writes every piece as it comes.
   */
  flushMs?: number;
}

export const DEFAULT_LIVE_TEXT_MAX_WATCHERS_PER_CALL = 16;
export const DEFAULT_LIVE_TEXT_MAX_WATCHERS = 512;
export const DEFAULT_LIVE_TEXT_BUFFER_CHARACTERS = 262_144;
export const DEFAULT_LIVE_TEXT_MAX_WATCHERS_PER_RUN = 16;
export const DEFAULT_LIVE_TEXT_RUN_IDLE_MS = 60_000;

/** Which attempt of which run a model call is: what makes its run's stream show it. */
export interface LiveTextAttempt {
  workflowId: string;
  runId: string;
  activityId: string;
  attempt: number;
}

/** What a model call attempt gets from the server: its URL, a place for its text, and an end. */
export interface LiveTextSink {
  pointer: LiveTextPointer;
  add(kind: LiveTextKind, text: string): void;
  end(outcome: 'completed' | 'failed'): void;
}

/** What the model activity is given: a way to open an attempt's live text. */
export interface LiveTextChannels {
  /** Opens attempt `attempt` of model call `call`; with `attempt`, its run's stream shows it too (and the pointer has `runUrl`). */
  open(call: number, attempt?: LiveTextAttempt): LiveTextSink;
}

interface RememberedRun {
  run: LiveTextRun;
  /** Forgets the run (and ends its streams) when it has had no attempt here for `runIdleMs`. */
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * A worker's one small HTTP server for live text (issue 32): `GET /calls/<token>` streams the
 * text of the model-call attempt that token was made for, as newline-delimited JSON
 * (`src/domain/live-text.ts`); `GET /runs/<token>` the text of every attempt of one run on this
 * worker, open now or later, each line tagged with its attempt. Call tokens are 128 random bits,
 * one per attempt; run tokens an HMAC of the run's ids under this process's secret
 * (`run-token.ts`); both known only to whoever can describe the run. Anything else is refused
 * quickly and the connection closed: another path or an unknown token 404, another method 405,
 * a request with a body 400, too many watchers 503. No request body is read.
 */
export class LiveTextServer implements LiveTextChannels {
  private readonly calls = new Map<string, LiveTextCall>();
  private readonly runs = new Map<string, RememberedRun>();
  private readonly runTokens = new RunTokens();
  private readonly limits: Required<Omit<LiveTextServerOptions, 'host' | 'port' | 'advertisedUrl' | 'advertisedHost'>>;
  private watchers = 0;
  private baseUrl = '';

  private constructor(
    private readonly server: Server,
    options: LiveTextServerOptions,
  ) {
    this.limits = {
      maxWatchersPerCall: options.maxWatchersPerCall ?? DEFAULT_LIVE_TEXT_MAX_WATCHERS_PER_CALL,
      maxWatchersPerRun: options.maxWatchersPerRun ?? DEFAULT_LIVE_TEXT_MAX_WATCHERS_PER_RUN,
      runIdleMs: options.runIdleMs ?? DEFAULT_LIVE_TEXT_RUN_IDLE_MS,
      maxWatchers: options.maxWatchers ?? DEFAULT_LIVE_TEXT_MAX_WATCHERS,
      bufferCharacters: options.bufferCharacters ?? DEFAULT_LIVE_TEXT_BUFFER_CHARACTERS,
      headersTimeoutMs: options.headersTimeoutMs ?? 5_000,
      flushMs: options.flushMs ?? DEFAULT_LIVE_TEXT_FLUSH_MS,
    };
  }

  /** Starts listening; resolves once it does. */
  static async start(options: LiveTextServerOptions = {}): Promise<LiveTextServer> {
    const headersTimeoutMs = options.headersTimeoutMs ?? 5_000;
    const server = createServer({
      maxHeaderSize: 8 * 1024,
      headersTimeout: headersTimeoutMs,
      requestTimeout: headersTimeoutMs,
      noDelay: true,
    });
    const live = new LiveTextServer(server, options);
    server.on('request', (request, response) => live.handle(request, response));
    server.on('clientError', (_error, socket) => socket.destroy());
    // Connections beyond the watchers allowed and a few refused ones are not even accepted.
    server.maxConnections = live.limits.maxWatchers + 64;
    // A connection idle between requests is closed soon; a watcher's stream is one long response.
    server.keepAliveTimeout = 1_000;
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const named = options.advertisedHost ?? host;
    const shownHost = named.includes(':') ? `[${named}]` : named;
    live.baseUrl = (options.advertisedUrl ?? `http://${shownHost}:${port}`).replace(/\/+$/, '');
    return live;
  }

  /** The base URL clients are given. */
  get url(): string {
    return this.baseUrl;
  }

  /** Watchers connected now. */
  get watcherCount(): number {
    return this.watchers;
  }

  /** Runs remembered now (an attempt open, or one ended within `runIdleMs`). */
  get runCount(): number {
    return this.runs.size;
  }

  /**
   * A new attempt's live text, at a new unguessable URL; its `end` forgets it. With `attempt`,
   * the run's stream shows it too, and the pointer carries the run's URL.
   */
  open(call: number, attempt?: LiveTextAttempt): LiveTextSink {
    const token = randomBytes(16).toString('hex');
    const live = new LiveTextCall(call, {
      bufferCharacters: this.limits.bufferCharacters,
      maxWatchers: this.limits.maxWatchersPerCall,
      flushMs: this.limits.flushMs,
    });
    this.calls.set(token, live);
    const run = attempt ? this.runTokens.of(attempt.workflowId, attempt.runId) : undefined;
    const runCall: RunCall | undefined = attempt && {
      live,
      activityId: attempt.activityId,
      attempt: attempt.attempt,
      call,
    };
    if (run && runCall) this.remember(run).run.add(runCall);
    return {
      pointer: { url: `${this.baseUrl}/calls/${token}`, ...(run ? { runUrl: `${this.baseUrl}/runs/${run}` } : {}) },
      add: (kind, text) => live.add(kind, text),
      end: (outcome) => {
        this.calls.delete(token);
        const remembered = run ? this.runs.get(run) : undefined;
        if (remembered && runCall) {
          remembered.run.remove(runCall);
          if (!remembered.run.openCalls) this.forgetWhenIdle(run as string, remembered);
        }
        live.end(outcome);
      },
    };
  }

  /** The run's entry, kept (no idle timer) while an attempt is open. */
  private remember(token: string): RememberedRun {
    let remembered = this.runs.get(token);
    if (!remembered) {
      remembered = { run: new LiveTextRun() };
      this.runs.set(token, remembered);
    }
    clearTimeout(remembered.idleTimer);
    remembered.idleTimer = undefined;
    return remembered;
  }

  private forgetWhenIdle(token: string, remembered: RememberedRun): void {
    clearTimeout(remembered.idleTimer);
    remembered.idleTimer = setTimeout(() => {
      if (remembered.run.openCalls || this.runs.get(token) !== remembered) return;
      this.runs.delete(token);
      remembered.run.end();
    }, this.limits.runIdleMs);
    remembered.idleTimer.unref();
  }

  /** Stops taking connections and closes those open. */
  async close(): Promise<void> {
    for (const [token, call] of this.calls) {
      this.calls.delete(token);
      call.end('failed');
    }
    for (const [token, remembered] of this.runs) {
      this.runs.delete(token);
      clearTimeout(remembered.idleTimer);
      remembered.run.end();
    }
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const refuse = (status: number, message: string) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      response.end(`${message}\n`);
      request.socket.destroySoon();
    };
    if (request.method !== 'GET') return refuse(405, 'only GET');
    const length = request.headers['content-length'];
    if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined)
      return refuse(400, 'no request body is accepted');
    const runMatch = RUN_TEXT_PATH_PATTERN.exec(request.url ?? '');
    if (runMatch) {
      const remembered = this.runs.get(runMatch[1] as string);
      if (!remembered) return refuse(404, 'no such run here (no model call of it for a while)');
      if (this.watchers >= this.limits.maxWatchers) return refuse(503, 'too many watchers on this worker');
      if (remembered.run.watcherCount >= this.limits.maxWatchersPerRun)
        return refuse(503, 'too many watchers of this run');
      this.startStream(request, response);
      remembered.run.watch(response);
      return;
    }
    const match = LIVE_TEXT_PATH_PATTERN.exec(request.url ?? '');
    const call = match ? this.calls.get(match[1] as string) : undefined;
    if (!call) return refuse(404, 'no such model call here (it may have ended)');
    if (this.watchers >= this.limits.maxWatchers) return refuse(503, 'too many watchers on this worker');
    if (call.watcherCount >= this.limits.maxWatchersPerCall) return refuse(503, 'too many watchers of this call');
    this.startStream(request, response);
    call.watch(responseOutlet(response));
  }

  /** The stream's headers, counted as a watcher until its connection closes. */
  private startStream(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      'content-type': LIVE_TEXT_CONTENT_TYPE,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    // The request timeout is for the request; the stream lasts as long as the call (or the run).
    request.socket.setTimeout(0);
    response.flushHeaders();
    this.watchers += 1;
    response.on('close', () => (this.watchers -= 1));
  }
}
