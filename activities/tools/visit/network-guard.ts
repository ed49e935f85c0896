import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { allowedHostMatches, parseAllowedHost } from '../../../src/domain/allowed-host';
import { ToolInputError } from '../tool-definition';
import {
  ipv4ToNumber,
  ipv6ToBigInt,
  lookUpSpecialPurpose,
  type BlockedAddressKind as SpecialPurposeKind,
} from './special-purpose-addresses';

/**
 * The SSRF guard of the visit tool: a web address may only be fetched when every address its
 * host resolves to is public, and the connection is then pinned to those checked addresses so
 * a second DNS answer (DNS rebinding) cannot swap in an internal one.
 */

/** Why an address may not be visited: a special-purpose range, or one of this machine's own addresses. */
export type BlockedAddressKind = SpecialPurposeKind | 'own';

/** The cloud instance-metadata address (AWS, GCP, Azure, ...), named in refusals. */
export const CLOUD_METADATA_ADDRESS = '169.254.169.254';

/**
 * Says why an IP address must not be visited, or `undefined` when it is a public address: every
 * special-purpose range (see `special-purpose-addresses.ts`: loopback, private, link-local incl.
 * 169.254.169.254, CGNAT, TEST-NETs, benchmarking, multicast, reserved, Teredo, ...), and IPv6
 * forms judged by the IPv4 address they carry (mapped, translated, NAT64, 6to4). A string that
 * is not an IP address at all is reported as `reserved` (never trusted).
 */
export function classifyAddress(address: string): SpecialPurposeKind | undefined {
  return lookUpSpecialPurpose(address).kind;
}

/** A comparable key of an IP address (`4:<number>` or `6:<value>`), or undefined for text that is not one. */
function addressKey(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) === 4) return `4:${ipv4ToNumber(bare) as number}`;
  const value = isIP(bare) === 6 ? ipv6ToBigInt(bare) : undefined;
  return value === undefined ? undefined : `6:${value}`;
}

/** The addresses of this machine's network interfaces (`os.networkInterfaces()`), read at each check: they change with DHCP and VPNs. */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

/**
 * Says why `address` must not be visited, or undefined when it may: {@link classifyAddress}, and
 * `own` when it (or the IPv4 address an IPv6 form carries) is one of `ownAddresses`, the
 * machine's own interface addresses, where the worker's neighbours (the Temporal Web UI, a
 * metrics port, databases) listen whatever range the address is in.
 */
export function classifyDestinationAddress(
  address: string,
  ownAddresses: readonly string[],
): BlockedAddressKind | undefined {
  const verdict = lookUpSpecialPurpose(address);
  if (verdict.kind) return verdict.kind;
  const own = new Set(ownAddresses.map(addressKey).filter((key): key is string => key !== undefined));
  const keys = [addressKey(address), verdict.embeddedIpv4 === undefined ? undefined : addressKey(verdict.embeddedIpv4)];
  return keys.some((key) => key !== undefined && own.has(key)) ? 'own' : undefined;
}

/** Raised when the guard refuses a destination; its message is the model's observation. */
export class DestinationRefusedError extends ToolInputError {}

/** How the guard decides. */
export interface NetworkGuardOptions {
  /** Allow loopback, private, link-local, the machine's own and every other non-public address. Default false. */
  allowPrivateNetworks: boolean;
  /**
   * Host names (or IP literals) that bypass the guard, e.g. a company intranet. Matched
   * case-insensitively; an entry starting with `.` also matches every subdomain. A bare host
   * allows ports 80 and 443 only; `host:port` names another port, `host:*` every port; IPv6
   * literals in brackets (`[fd00::7]:8080`). Malformed entries match nothing. Default none.
   */
  allowedHosts: readonly string[];
  /** Resolves a host to all its addresses; default `dns.lookup(host, { all: true })`. */
  resolveHost?: (hostname: string) => Promise<LookupAddress[]>;
  /** This machine's own addresses, refused like private ones; default the addresses of `os.networkInterfaces()`, read at each check. */
  ownAddresses?: () => readonly string[];
}

/** Where a request may connect: the checked addresses, or none when the guard was bypassed. */
export interface CheckedDestination {
  url: URL;
  /** The addresses that passed the guard; the connection must use one of them. */
  pinnedAddresses?: LookupAddress[];
  /** A `lookup` for `http.request` that answers only with the pinned addresses. */
  lookup?: LookupFunction;
}

function resolveWithSystemResolver(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

/** The host of a URL without IPv6 brackets, lower-cased. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** True when `hostname` on `port` is on the allowed list (see {@link NetworkGuardOptions.allowedHosts}). */
export function isAllowedHost(hostname: string, port: number, allowedHosts: readonly string[]): boolean {
  return allowedHosts.some((entry) => {
    const allowed = parseAllowedHost(entry);
    return typeof allowed !== 'string' && allowedHostMatches(allowed, hostname, port);
  });
}

/** The port a URL connects to (its default when none is written). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

const HOW_TO_ALLOW =
  'Internal, loopback and link-local destinations are blocked to protect internal services; ' +
  'an operator can allow them with REACT_AGENT_VISIT_ALLOW_PRIVATE=true or allow this host with REACT_AGENT_VISIT_ALLOWED_HOSTS.';

/** `127.0.0.1, a loopback address` (naming the cloud metadata address when it is that). */
function describeBlocked(address: string, kind: BlockedAddressKind): string {
  const embedded = lookUpSpecialPurpose(address).embeddedIpv4;
  const named = embedded ? `${address} (which carries ${embedded})` : address;
  if (kind === 'own') return `${named}, an address of this machine's own network interfaces`;
  const metadata =
    address === CLOUD_METADATA_ADDRESS || embedded === CLOUD_METADATA_ADDRESS ? ' (the cloud metadata service)' : '';
  return `${named}, a ${kind} address${metadata}`;
}

/** Said after a refusal when the host is on the allowed list, but for other ports. */
function portHint(hostname: string, port: number, allowedHosts: readonly string[]): string {
  const listed = allowedHosts.some((entry) => {
    const allowed = parseAllowedHost(entry);
    return typeof allowed !== 'string' && allowedHostMatches({ ...allowed, ports: 'any' }, hostname, port);
  });
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return listed
    ? ` REACT_AGENT_VISIT_ALLOWED_HOSTS allows ${host} on other ports only (a bare host means ports 80 and 443); ${host}:${port} would allow this one.`
    : '';
}

/** A `lookup` that only ever answers with the given, already checked addresses. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return ((
    _hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (...args: unknown[]) => void,
  ) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const usable = family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
    if (!usable.length) {
      callback(Object.assign(new Error(`no checked IPv${family} address`), { code: 'ENOTFOUND' }));
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, (usable[0] as LookupAddress).address, (usable[0] as LookupAddress).family);
  }) as LookupFunction;
}

/**
 * Checks that `url` may be fetched: http or https only; unless private networks are allowed or
 * the host and port are on the allowed list, every address of the host must be public and none
 * of the machine's own. Returns a
 * `lookup` pinned to the checked addresses.
 *
 * @throws DestinationRefusedError naming the address and why, and how an operator allows it.
 * @throws Error when the host cannot be resolved.
 */
export async function checkDestination(url: URL, options: NetworkGuardOptions): Promise<CheckedDestination> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DestinationRefusedError(
      `only http and https addresses can be visited, not ${url.protocol.replace(/:$/, '')}: ${url.href}`,
    );
  }
  const hostname = bareHostname(url);
  const port = portOf(url);
  if (options.allowPrivateNetworks || isAllowedHost(hostname, port, options.allowedHosts)) return { url };
  const ownAddresses = (options.ownAddresses ?? interfaceAddresses)();

  if (isIP(hostname)) {
    const kind = classifyDestinationAddress(hostname, ownAddresses);
    if (kind)
      throw new DestinationRefusedError(
        `access to ${hostname} is blocked: it is ${describeBlocked(hostname, kind)}. ${HOW_TO_ALLOW}${portHint(hostname, port, options.allowedHosts)}`,
      );
    return { url };
  }

  const addresses = await (options.resolveHost ?? resolveWithSystemResolver)(hostname);
  if (!addresses.length) throw new Error(`the host ${hostname} has no addresses`);
  for (const { address } of addresses) {
    const kind = classifyDestinationAddress(address, ownAddresses);
    if (kind) {
      throw new DestinationRefusedError(
        `access to ${hostname} is blocked: it resolves to ${describeBlocked(address, kind)}. ${HOW_TO_ALLOW}${portHint(hostname, port, options.allowedHosts)}`,
      );
    }
  }
  return { url, pinnedAddresses: addresses, lookup: pinnedLookup(addresses) };
}
