import { isIP } from 'node:net';

/**
 * The address ranges the visit tool never connects to: every entry of IANA's IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its updates), plus multicast and the
 * deprecated site-local range. IPv6 forms that carry an IPv4 address (IPv4-mapped,
 * IPv4-translated, NAT64 64:ff9b::/96, 6to4) are judged by that IPv4 address against the IPv4
 * table; every other entry is refused whole. One table, in one place.
 */

/** Why an address is not public. */
export type BlockedAddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (carrier-grade NAT)'
  | 'multicast'
  | 'reserved'
  | 'documentation (TEST-NET)'
  | 'benchmarking'
  | 'special-purpose';

/** One registry entry. `embeddedIpv4` (IPv6 only) pulls out the IPv4 address the form carries. */
interface SpecialPurposeRange {
  cidr: string;
  kind: BlockedAddressKind;
  /** What the registry calls it, for the table's readers and the tests. */
  name: string;
  embeddedIpv4?: (address: bigint) => number;
  /** With `embeddedIpv4`: refused even when the IPv4 inside is public (the kind then comes from the range). */
  refusedWhole?: true;
}

const low32 = (address: bigint): number => Number(address & 0xffffffffn);

/** IPv4, most specific first. Ranges that are globally reachable anycast services are refused too: nothing a research page needs lives there. */
const IPV4_RANGES: readonly SpecialPurposeRange[] = [
  { cidr: '0.0.0.0/8', kind: 'unspecified', name: '"this network" (RFC 791)' },
  { cidr: '10.0.0.0/8', kind: 'private', name: 'private-use (RFC 1918)' },
  { cidr: '100.64.0.0/10', kind: 'shared (carrier-grade NAT)', name: 'shared address space (RFC 6598)' },
  { cidr: '127.0.0.0/8', kind: 'loopback', name: 'loopback (RFC 1122)' },
  { cidr: '169.254.0.0/16', kind: 'link-local', name: 'link-local, incl. cloud metadata 169.254.169.254 (RFC 3927)' },
  { cidr: '172.16.0.0/12', kind: 'private', name: 'private-use (RFC 1918)' },
  {
    cidr: '192.0.0.0/24',
    kind: 'reserved',
    name: 'IETF protocol assignments, incl. DS-Lite, PCP/TURN anycast, NAT64 discovery (RFC 6890)',
  },
  { cidr: '192.0.2.0/24', kind: 'documentation (TEST-NET)', name: 'TEST-NET-1 (RFC 5737)' },
  { cidr: '192.31.196.0/24', kind: 'special-purpose', name: 'AS112-v4 (RFC 7535)' },
  { cidr: '192.52.193.0/24', kind: 'special-purpose', name: 'AMT (RFC 7450)' },
  { cidr: '192.88.99.0/24', kind: 'reserved', name: '6to4 relay anycast, deprecated (RFC 7526)' },
  { cidr: '192.168.0.0/16', kind: 'private', name: 'private-use (RFC 1918)' },
  { cidr: '192.175.48.0/24', kind: 'special-purpose', name: 'direct delegation AS112 service (RFC 7534)' },
  { cidr: '198.18.0.0/15', kind: 'benchmarking', name: 'benchmarking (RFC 2544)' },
  { cidr: '198.51.100.0/24', kind: 'documentation (TEST-NET)', name: 'TEST-NET-2 (RFC 5737)' },
  { cidr: '203.0.113.0/24', kind: 'documentation (TEST-NET)', name: 'TEST-NET-3 (RFC 5737)' },
  { cidr: '224.0.0.0/4', kind: 'multicast', name: 'multicast (RFC 5771)' },
  {
    cidr: '240.0.0.0/4',
    kind: 'reserved',
    name: 'reserved, incl. limited broadcast 255.255.255.255 (RFC 1112, RFC 919)',
  },
];

/** IPv6, most specific first (the first match decides). */
const IPV6_RANGES: readonly SpecialPurposeRange[] = [
  { cidr: '::/128', kind: 'unspecified', name: 'unspecified (RFC 4291)' },
  { cidr: '::1/128', kind: 'loopback', name: 'loopback (RFC 4291)' },
  { cidr: '::ffff:0:0/96', kind: 'reserved', name: 'IPv4-mapped (RFC 4291)', embeddedIpv4: low32 },
  { cidr: '::ffff:0:0:0/96', kind: 'reserved', name: 'IPv4-translated (RFC 2765)', embeddedIpv4: low32 },
  {
    cidr: '::/96',
    kind: 'reserved',
    name: 'IPv4-compatible, deprecated (RFC 4291)',
    embeddedIpv4: low32,
    refusedWhole: true,
  },
  { cidr: '64:ff9b::/96', kind: 'reserved', name: 'IPv4/IPv6 translation, NAT64 (RFC 6052)', embeddedIpv4: low32 },
  { cidr: '64:ff9b:1::/48', kind: 'private', name: 'local-use IPv4/IPv6 translation (RFC 8215)' },
  { cidr: '100::/64', kind: 'reserved', name: 'discard-only (RFC 6666)' },
  { cidr: '100:0:0:1::/64', kind: 'reserved', name: 'dummy IPv6 prefix (RFC 9780)' },
  {
    cidr: '2001::/32',
    kind: 'special-purpose',
    name: 'Teredo (RFC 4380): the relay and client it names are not where the connection goes',
  },
  { cidr: '2001:db8::/32', kind: 'documentation (TEST-NET)', name: 'documentation (RFC 3849)' },
  { cidr: '2001:2::/48', kind: 'benchmarking', name: 'benchmarking (RFC 5180)' },
  {
    cidr: '2001::/23',
    kind: 'special-purpose',
    name: 'IETF protocol assignments, incl. ORCHID, AMT, AS112-v6, PCP/TURN anycast (RFC 2928)',
  },
  {
    cidr: '2002::/16',
    kind: 'reserved',
    name: '6to4 (RFC 3056)',
    embeddedIpv4: (address) => Number((address >> 80n) & 0xffffffffn),
  },
  { cidr: '2620:4f:8000::/48', kind: 'special-purpose', name: 'direct delegation AS112 service (RFC 7534)' },
  { cidr: '3fff::/20', kind: 'documentation (TEST-NET)', name: 'documentation (RFC 9637)' },
  { cidr: '5f00::/16', kind: 'special-purpose', name: 'segment routing SIDs (RFC 9602)' },
  { cidr: 'fc00::/7', kind: 'private', name: 'unique-local (RFC 4193)' },
  { cidr: 'fe80::/10', kind: 'link-local', name: 'link-local unicast (RFC 4291)' },
  { cidr: 'fec0::/10', kind: 'private', name: 'site-local, deprecated (RFC 3879)' },
  { cidr: 'ff00::/8', kind: 'multicast', name: 'multicast (RFC 4291)' },
];

/** The IPv4 address as a number, or undefined when `address` is not dotted-quad IPv4. */
export function ipv4ToNumber(address: string): number | undefined {
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

/** Dotted-quad text of an IPv4 number. */
export function numberToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** The 128-bit value of an IPv6 address (brackets and zone id dropped), or undefined when malformed. */
export function ipv6ToBigInt(address: string): bigint | undefined {
  let text = address
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  if (isIP(text) !== 6) return undefined;
  let tail: number[] = [];
  const embedded = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (embedded) {
    const value = ipv4ToNumber(embedded[1] as string);
    if (value === undefined) return undefined;
    tail = [Math.floor(value / 65536), value % 65536];
    text = text.slice(0, -(embedded[1] as string).length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  const explicit = head.length + rest.length + tail.length;
  const groups =
    halves.length === 2 ? [...head, ...new Array<number>(8 - explicit).fill(0), ...rest, ...tail] : [...head, ...tail];
  if (groups.length !== 8 || groups.some((group) => !(group >= 0 && group <= 0xffff))) return undefined;
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

interface CompiledRange extends SpecialPurposeRange {
  first: bigint;
  prefixLength: number;
}

function compile(ranges: readonly SpecialPurposeRange[], bits: 32 | 128): CompiledRange[] {
  return ranges.map((range) => {
    const [address, prefix] = range.cidr.split('/') as [string, string];
    const first = bits === 32 ? BigInt(ipv4ToNumber(address) as number) : (ipv6ToBigInt(address) as bigint);
    return { ...range, first, prefixLength: Number(prefix) };
  });
}

const COMPILED_IPV4 = compile(IPV4_RANGES, 32);
const COMPILED_IPV6 = compile(IPV6_RANGES, 128);

function findRange(value: bigint, ranges: readonly CompiledRange[], bits: number): CompiledRange | undefined {
  return ranges.find(
    (range) => value >> BigInt(bits - range.prefixLength) === range.first >> BigInt(bits - range.prefixLength),
  );
}

/** What the table says about one address. */
export interface AddressVerdict {
  /** Why it is refused; undefined when it is a public address. */
  kind: BlockedAddressKind | undefined;
  /** The registry entry that decided (undefined for a public address outside every entry). */
  range?: string;
  /** The IPv4 address an IPv6 form carries (IPv4-mapped, -translated, NAT64, 6to4), dotted. */
  embeddedIpv4?: string;
}

/**
 * Looks `address` (IPv4 or IPv6 text, brackets and zone id allowed) up in the special-purpose
 * table. Text that is not an IP address is `reserved` (never trusted).
 */
export function lookUpSpecialPurpose(address: string): AddressVerdict {
  const bare = address.replace(/^\[|\]$/g, '');
  const version = isIP(bare.replace(/%.*$/, ''));
  if (version === 4) {
    const range = findRange(BigInt(ipv4ToNumber(bare) as number), COMPILED_IPV4, 32);
    return range ? { kind: range.kind, range: range.cidr } : { kind: undefined };
  }
  const value = version === 6 ? ipv6ToBigInt(bare) : undefined;
  if (value === undefined) return { kind: 'reserved' };
  const range = findRange(value, COMPILED_IPV6, 128);
  if (!range) return { kind: undefined };
  if (!range.embeddedIpv4) return { kind: range.kind, range: range.cidr };
  const embeddedIpv4 = numberToIpv4(range.embeddedIpv4(value));
  const inner = lookUpSpecialPurpose(embeddedIpv4);
  if (inner.kind) return { kind: inner.kind, range: inner.range as string, embeddedIpv4 };
  return range.refusedWhole ? { kind: range.kind, range: range.cidr, embeddedIpv4 } : { kind: undefined, embeddedIpv4 };
}

/** The table's entries, for documentation and tests: `[cidr, kind, name, judged by the IPv4 inside]`. */
export function specialPurposeTable(): Array<
  [cidr: string, kind: BlockedAddressKind, name: string, judgedByEmbeddedIpv4: boolean]
> {
  return [...IPV4_RANGES, ...IPV6_RANGES].map((range) => [
    range.cidr,
    range.kind,
    range.name,
    range.embeddedIpv4 !== undefined && !range.refusedWhole,
  ]);
}
