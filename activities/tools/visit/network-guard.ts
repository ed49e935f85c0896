import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { ToolInputError } from '../tool-definition';

/**
 * The SSRF guard of the visit tool: a web address may only be fetched when every address its
 * host resolves to is public, and the connection is then pinned to those checked addresses so
 * a second DNS answer (DNS rebinding) cannot swap in an internal one.
 */

/** Why an address is not public. */
export type BlockedAddressKind = 'unspecified' | 'loopback' | 'private' | 'link-local' | 'shared (carrier-grade NAT)' | 'multicast' | 'reserved';

interface Ipv4Range {
  first: number;
  prefixLength: number;
  kind: BlockedAddressKind;
}

function ipv4Range(cidr: string, kind: BlockedAddressKind): Ipv4Range {
  const [address, prefix] = cidr.split('/') as [string, string];
  return { first: ipv4ToNumber(address) as number, prefixLength: Number(prefix), kind };
}

/** IPv4 ranges refused unless private networks are allowed. */
const BLOCKED_IPV4_RANGES: readonly Ipv4Range[] = [
  ipv4Range('0.0.0.0/8', 'unspecified'),
  ipv4Range('10.0.0.0/8', 'private'),
  ipv4Range('100.64.0.0/10', 'shared (carrier-grade NAT)'),
  ipv4Range('127.0.0.0/8', 'loopback'),
  ipv4Range('169.254.0.0/16', 'link-local'),
  ipv4Range('172.16.0.0/12', 'private'),
  ipv4Range('192.0.0.0/24', 'reserved'),
  ipv4Range('192.168.0.0/16', 'private'),
  ipv4Range('198.18.0.0/15', 'reserved'),
  ipv4Range('224.0.0.0/4', 'multicast'),
  ipv4Range('240.0.0.0/4', 'reserved'),
];

/** The cloud instance-metadata address (AWS, GCP, Azure, ...), named in refusals. */
export const CLOUD_METADATA_ADDRESS = '169.254.169.254';

function ipv4ToNumber(address: string): number | undefined {
  const parts = address.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function classifyIpv4Number(value: number): BlockedAddressKind | undefined {
  for (const range of BLOCKED_IPV4_RANGES) {
    const size = 2 ** (32 - range.prefixLength);
    if (value >= range.first && value < range.first + size) return range.kind;
  }
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or undefined when malformed. */
function ipv6ToGroups(address: string): number[] | undefined {
  let text = address
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  const groups: number[] = [];
  const embeddedIpv4 = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  let tail: number[] = [];
  if (embeddedIpv4) {
    const value = ipv4ToNumber(embeddedIpv4[1] as string);
    if (value === undefined) return undefined;
    tail = [Math.floor(value / 65536), value % 65536];
    text = text.slice(0, -(embeddedIpv4[1] as string).length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] | undefined => {
    if (!part) return [];
    const result: number[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(group)) return undefined;
      result.push(parseInt(group, 16));
    }
    return result;
  };
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (!head || !rest) return undefined;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 2) {
    if (explicit > 7) return undefined;
    groups.push(...head, ...new Array<number>(8 - explicit).fill(0), ...rest, ...tail);
  } else {
    if (explicit !== 8) return undefined;
    groups.push(...head, ...tail);
  }
  return groups;
}

function classifyIpv6Groups(groups: number[]): BlockedAddressKind | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedIpv4 = g6 * 65536 + g7;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
  if (firstFiveZero && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated): judge the IPv4 inside.
  if (firstFiveZero && (g5 === 0xffff || g5 === 0)) return classifyIpv4Number(embeddedIpv4) ?? (g5 === 0 ? 'reserved' : undefined);
  // 64:ff9b::a.b.c.d (NAT64): the gateway would connect to the IPv4 inside.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIpv4Number(embeddedIpv4);
  // 2002:AABB:CCDD::/48 (6to4) embeds an IPv4 address in groups 1 and 2.
  if (g0 === 0x2002) return classifyIpv4Number(g1 * 65536 + g2);
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'multicast'; // ff00::/8
  return undefined;
}

/**
 * Says why an IP address must not be visited, or `undefined` when it is a public address.
 * Covers loopback, private, link-local (incl. 169.254.169.254), CGNAT, 0.0.0.0/8, multicast,
 * reserved ranges, and IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4).
 * A string that is not an IP address at all is reported as `reserved` (never trusted).
 */
export function classifyAddress(address: string): BlockedAddressKind | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare.replace(/%.*$/, ''));
  if (version === 4) return classifyIpv4Number(ipv4ToNumber(bare) as number);
  if (version === 6) {
    const groups = ipv6ToGroups(bare);
    return groups ? classifyIpv6Groups(groups) : 'reserved';
  }
  return 'reserved';
}

/** Raised when the guard refuses a destination; its message is the model's observation. */
export class DestinationRefusedError extends ToolInputError {}

/** How the guard decides. */
export interface NetworkGuardOptions {
  /** Allow loopback, private, link-local and other non-public addresses. Default false. */
  allowPrivateNetworks: boolean;
  /**
   * Host names (or IP literals) that bypass the guard, e.g. a company intranet. Matched
   * case-insensitively; an entry starting with `.` also matches every subdomain. Default none.
   */
  allowedHosts: readonly string[];
  /** Resolves a host to all its addresses; default `dns.lookup(host, { all: true })`. */
  resolveHost?: (hostname: string) => Promise<LookupAddress[]>;
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
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/** The host of a URL without IPv6 brackets, lower-cased. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** True when `hostname` is on the allowed list (exact, or a subdomain of a `.domain` entry). */
export function isAllowedHost(hostname: string, allowedHosts: readonly string[]): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return allowedHosts.some((entry) => {
    const allowed = entry
      .trim()
      .replace(/^\[|\]$/g, '')
      .toLowerCase();
    if (!allowed) return false;
    if (allowed.startsWith('.')) return host.endsWith(allowed) || host === allowed.slice(1);
    return host === allowed;
  });
}

const HOW_TO_ALLOW =
  'Internal, loopback and link-local destinations are blocked to protect internal services; ' +
  'an operator can allow them with REACT_AGENT_VISIT_ALLOW_PRIVATE=true or allow this host with REACT_AGENT_VISIT_ALLOWED_HOSTS.';

/** `127.0.0.1, a loopback address` (naming the cloud metadata address when it is that). */
function describeBlocked(address: string, kind: BlockedAddressKind): string {
  const metadata = address === CLOUD_METADATA_ADDRESS || address.endsWith(`:${CLOUD_METADATA_ADDRESS}`) ? ' (the cloud metadata service)' : '';
  return `${address}, a ${kind} address${metadata}`;
}

/** A `lookup` that only ever answers with the given, already checked addresses. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
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
 * the host is on the allowed list, every address of the host must be public. Returns a
 * `lookup` pinned to the checked addresses.
 *
 * @throws DestinationRefusedError naming the address and why, and how an operator allows it.
 * @throws Error when the host cannot be resolved.
 */
export async function checkDestination(url: URL, options: NetworkGuardOptions): Promise<CheckedDestination> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DestinationRefusedError(`only http and https addresses can be visited, not ${url.protocol.replace(/:$/, '')}: ${url.href}`);
  }
  const hostname = bareHostname(url);
  if (options.allowPrivateNetworks || isAllowedHost(hostname, options.allowedHosts)) return { url };

  if (isIP(hostname)) {
    const kind = classifyAddress(hostname);
    if (kind) throw new DestinationRefusedError(`access to ${hostname} is blocked: it is ${describeBlocked(hostname, kind)}. ${HOW_TO_ALLOW}`);
    return { url };
  }

  const addresses = await (options.resolveHost ?? resolveWithSystemResolver)(hostname);
  if (!addresses.length) throw new Error(`the host ${hostname} has no addresses`);
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind) {
      throw new DestinationRefusedError(`access to ${hostname} is blocked: it resolves to ${describeBlocked(address, kind)}. ${HOW_TO_ALLOW}`);
    }
  }
  return { url, pinnedAddresses: addresses, lookup: pinnedLookup(addresses) };
}
