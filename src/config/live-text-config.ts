import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { ConfigurationError } from './configuration-error';
import { DEFAULT_LIVE_TEXT_FLUSH_MS } from '../domain/live-text-batching';
import {
  checkedHttpUrl,
  readNumberInRange,
  readPositiveInteger,
  readString,
  type Environment,
} from './environment-values';

export const LIVE_TEXT_LISTEN_VARIABLE = 'REACT_AGENT_LIVE_TEXT_LISTEN';
export const LIVE_TEXT_URL_VARIABLE = 'REACT_AGENT_LIVE_TEXT_URL';

/** Where a worker serves the live text of its model calls (issue 32), read by {@link loadLiveTextConfig}. */
export interface LiveTextConfig {
  /**
   * Host and port to listen on; undefined: no live text server (clients read the heartbeat
   * details' tail, every 5 s). `REACT_AGENT_LIVE_TEXT_LISTEN`: `host:port` (an IP literal, IPv6
   * in brackets, or `localhost`), a bare port for every interface, or `off`; default
   * `127.0.0.1:0` (this machine only, any free port).
   */
  listen?: { host: string; port: number };
  /**
   * Base URL given to clients (`<url>/calls/<token>`), for clients on other machines: the name
   * and port they reach this worker by. `REACT_AGENT_LIVE_TEXT_URL`; default
   * `http://<listen host>:<port>`, with this machine's host name ({@link advertisedHost}) when
   * listening on every interface.
   */
  advertisedUrl?: string;
  /** This machine's host name, to advertise with the port listened on, when listening on every interface and no URL is set. */
  advertisedHost?: string;
  /** Watchers of one model call at once. `REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_CALL`; default 16. */
  maxWatchersPerCall: number;
  /** Watchers of one run's stream at once. `REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_RUN`; default 16. */
  maxWatchersPerRun: number;
  /** Watchers on this worker at once (of calls and of runs). `REACT_AGENT_LIVE_TEXT_MAX_WATCHERS`; default 512. */
  maxWatchers: number;
  /**
   * Pieces a model call streams within this many ms go to its watchers in one write (the first
   * after a quiet interval at once). `REACT_AGENT_LIVE_TEXT_FLUSH_MS`, 0 to 1,000; default 100; 0
   * writes every piece as it comes.
   */
  flushMs: number;
}

const invalid = (raw: string, why: string) =>
  new ConfigurationError(
    LIVE_TEXT_LISTEN_VARIABLE,
    `${LIVE_TEXT_LISTEN_VARIABLE} must be host:port (such as 127.0.0.1:0, 0.0.0.0:7480, [::1]:7480 or 7480) or off; got ${JSON.stringify(raw)} (${why})`,
  );

function listenAddress(raw: string): { host: string; port: number } {
  const bare = /^:?(\d{1,5})$/.exec(raw);
  const match = bare ? undefined : /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  if (!bare && !match) throw invalid(raw, 'not host:port');
  const host = bare ? '0.0.0.0' : ((match?.[1] ?? match?.[2]) as string);
  const port = Number(bare ? bare[1] : match?.[3]);
  if (port > 65_535) throw invalid(raw, 'the port must be from 0 to 65535');
  if (host === 'localhost') return { host: '127.0.0.1', port };
  if (!isIP(host)) throw invalid(raw, 'the host must be an IP address or localhost');
  return { host, port };
}

/**
 * Reads the live text settings.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable when the address or URL is malformed.
 */
export function loadLiveTextConfig(environment: Environment = process.env): LiveTextConfig {
  const raw = readString(environment, LIVE_TEXT_LISTEN_VARIABLE) ?? '127.0.0.1:0';
  const listen = raw.toLowerCase() === 'off' ? undefined : listenAddress(raw);
  const configuredUrl = readString(environment, LIVE_TEXT_URL_VARIABLE);
  const everyInterface = listen && (listen.host === '0.0.0.0' || listen.host === '::');
  return {
    ...(listen ? { listen } : {}),
    ...(configuredUrl
      ? { advertisedUrl: checkedHttpUrl(LIVE_TEXT_URL_VARIABLE, configuredUrl).replace(/\/+$/, '') }
      : everyInterface
        ? { advertisedHost: hostname() }
        : {}),
    maxWatchersPerCall: readPositiveInteger(environment, 'REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_CALL', 16),
    maxWatchersPerRun: readPositiveInteger(environment, 'REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_RUN', 16),
    maxWatchers: readPositiveInteger(environment, 'REACT_AGENT_LIVE_TEXT_MAX_WATCHERS', 512),
    flushMs: readNumberInRange(environment, 'REACT_AGENT_LIVE_TEXT_FLUSH_MS', DEFAULT_LIVE_TEXT_FLUSH_MS, 0, 1_000),
  };
}
