/**
 * One entry of the visit tool's allowed hosts (`REACT_AGENT_VISIT_ALLOWED_HOSTS`): a host that
 * bypasses the SSRF guard, on some ports. `wiki.corp` (a bare host) allows the default web ports
 * 80 and 443 only; `wiki.corp:8080` that one port; `wiki.corp:*` every port. A leading `.`
 * (`.corp.example`) also matches every subdomain; IPv6 literals are written in brackets
 * (`[fd00::7]:8080`), and a bracket-less IPv6 literal is a bare host.
 */
export interface AllowedHost {
  /** Lower-cased host, without brackets; starts with `.` for a domain and its subdomains. */
  host: string;
  /** `default` (80 and 443), `any`, or one port. */
  ports: 'default' | 'any' | number;
}

/** The ports a bare host (no `:port`) allows. */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [80, 443];

/** Parses one entry; returns a sentence saying what is wrong when it is malformed. */
export function parseAllowedHost(entry: string): AllowedHost | string {
  const text = entry.trim().toLowerCase();
  if (!text) return 'an empty entry';
  if (/[/\s@?#]/.test(text) || /^[a-z][a-z0-9+.-]*:\/\//.test(text)) return 'a URL or path, not a host name';
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(.*))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1] as string;
    portText = bracketed[2];
  } else if (text.startsWith('[')) {
    return 'an IPv6 literal without its closing bracket';
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [host, portText] = text.split(':') as [string, string];
  } else {
    host = text;
  }
  if (!host || host === '.') return 'no host name';
  if (portText === undefined) return { host, ports: 'default' };
  if (portText === '*') return { host, ports: 'any' };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535)
    return `port ${JSON.stringify(portText)} is not 1–65535 or *`;
  return { host, ports: Number(portText) };
}

/** True when `hostname` (brackets allowed) on `port` is what `allowed` lets through. */
export function allowedHostMatches(allowed: AllowedHost, hostname: string, port: number): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const hostMatches = allowed.host.startsWith('.')
    ? host.endsWith(allowed.host) || host === allowed.host.slice(1)
    : host === allowed.host;
  if (!hostMatches) return false;
  if (allowed.ports === 'any') return true;
  if (allowed.ports === 'default') return DEFAULT_ALLOWED_PORTS.includes(port);
  return allowed.ports === port;
}
