import { isIPv4, isIPv6 } from 'node:net';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

/** The variable that turns the worker's Prometheus endpoint on. */
export const METRICS_ADDRESS_VARIABLE = 'REACT_AGENT_METRICS_ADDRESS';

/** Where a worker serves Prometheus metrics, read by {@link loadMetricsConfig}. */
export interface MetricsConfig {
  /**
   * `ip:port` the Temporal SDK's Prometheus exporter binds (`/metrics` on it), as the SDK wants it:
   * an IP literal (IPv6 in brackets) and a port from 1 to 65535. Undefined: no metrics endpoint.
   * `REACT_AGENT_METRICS_ADDRESS`; `localhost` is read as 127.0.0.1, a bare port (`9464`, `:9464`)
   * as every interface (`0.0.0.0:9464`).
   */
  bindAddress?: string;
}

const EXAMPLE = 'such as 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464 or 9464';

function invalid(raw: string, why: string): ConfigurationError {
  return new ConfigurationError(
    METRICS_ADDRESS_VARIABLE,
    `${METRICS_ADDRESS_VARIABLE} must be an address to serve Prometheus metrics on, ${EXAMPLE}; got ${JSON.stringify(raw)} (${why})`,
  );
}

function checkedPort(raw: string, port: string): string {
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65_535)
    throw invalid(raw, 'the port must be a number from 1 to 65535');
  return String(Number(port));
}

/**
 * Reads `REACT_AGENT_METRICS_ADDRESS`: unset or blank, no metrics endpoint.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable when the host is not an IP literal (or `localhost`) or the port is out of range.
 */
export function loadMetricsConfig(environment: Environment = process.env): MetricsConfig {
  const raw = readString(environment, METRICS_ADDRESS_VARIABLE);
  if (raw === undefined) return {};
  if (raw.includes('/')) throw invalid(raw, 'an address to bind, not a URL');
  if (/^:?\d+$/.test(raw)) return { bindAddress: `0.0.0.0:${checkedPort(raw, raw.replace(/^:/, ''))}` };
  const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(raw);
  if (bracketed) {
    const [, host = '', port = ''] = bracketed;
    if (!isIPv6(host)) throw invalid(raw, `"${host}" is not an IPv6 address`);
    return { bindAddress: `[${host}]:${checkedPort(raw, port)}` };
  }
  const colon = raw.lastIndexOf(':');
  if (colon < 0) throw invalid(raw, 'no port');
  const host = raw.slice(0, colon);
  const port = checkedPort(raw, raw.slice(colon + 1));
  if (host.includes(':')) throw invalid(raw, 'an IPv6 address goes in brackets');
  if (host.toLowerCase() === 'localhost') return { bindAddress: `127.0.0.1:${port}` };
  if (!isIPv4(host)) throw invalid(raw, `the host must be an IP address, not "${host}"`);
  return { bindAddress: `${host}:${port}` };
}
