/**
 * What a worker on a machine (a network namespace) sees of its environment. Inside the namespace
 * 127.0.0.1 is the machine's own loopback, so every loopback address the worker is given —
 * TEMPORAL_ADDRESS (`127.0.0.1:7233`), the S3 endpoint, and URLs such as
 * `OPENAI_BASE_URL=http://127.0.0.1:8080/v1` — is rewritten to the host's end of the machine's
 * link, where the machine's relay forwards the same port to 127.0.0.1. Anything else (another
 * host, the internet) is out of a machine's reach: it has no route beyond its link.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost']);
const HOST_AND_PORT = /^(127\.0\.0\.1|localhost):(\d{1,5})$/;

function loopbackUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return LOOPBACK_HOSTS.has(url.hostname) ? url : undefined;
  } catch {
    return undefined;
  }
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** The loopback ports `environment` names (`host:port` values and http(s) URLs on 127.0.0.1 or localhost), ascending, each once. */
export function loopbackPorts(environment: Readonly<Record<string, string | undefined>>): number[] {
  const ports = new Set<number>();
  for (const value of Object.values(environment)) {
    if (value === undefined) continue;
    const hostAndPort = HOST_AND_PORT.exec(value);
    if (hostAndPort) ports.add(Number(hostAndPort[2]));
    const url = loopbackUrl(value);
    if (url) ports.add(portOf(url));
  }
  return [...ports].sort((a, b) => a - b);
}

/** `environment` with every loopback address of {@link loopbackPorts} replaced by `hostAddress` (the port and the rest kept). */
export function environmentOnMachine(
  environment: Readonly<Record<string, string | undefined>>,
  hostAddress: string,
): Record<string, string> {
  const rewritten: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    const hostAndPort = HOST_AND_PORT.exec(value);
    if (hostAndPort) {
      rewritten[name] = `${hostAddress}:${hostAndPort[2]}`;
      continue;
    }
    const url = loopbackUrl(value);
    if (url) {
      // Only the host part changes: the text is kept as written otherwise (no trailing slash added).
      const prefix = /^https?:\/\/[^/?#]*/i.exec(value)?.[0] ?? '';
      const authority = `${url.protocol}//${url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${hostAddress}:${portOf(url)}`;
      rewritten[name] = `${authority}${value.slice(prefix.length)}`;
      continue;
    }
    rewritten[name] = value;
  }
  return rewritten;
}
