import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, test } from '@jest/globals';
import {
  checkDestination,
  classifyAddress,
  classifyDestinationAddress,
  DestinationRefusedError,
  isAllowedHost,
  type BlockedAddressKind,
  type NetworkGuardOptions,
} from '../../activities/tools/visit/network-guard';
import { ToolInputError } from '../../activities/tools/tool-definition';
import {
  ipv4ToNumber,
  ipv6ToBigInt,
  numberToIpv4,
  specialPurposeTable,
} from '../../activities/tools/visit/special-purpose-addresses';

/** Every range the guard refuses, its edges, and public neighbours that must pass. */
const CLASSIFICATION_TABLE: Array<[address: string, expected: BlockedAddressKind | undefined]> = [
  // IPv4 loopback 127/8
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['126.255.255.255', undefined],
  ['128.0.0.1', undefined],
  // private 10/8, 172.16/12, 192.168/16
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['11.0.0.1', undefined],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.15.255.255', undefined],
  ['172.32.0.1', undefined],
  ['192.168.1.1', 'private'],
  ['192.169.0.1', undefined],
  // link-local 169.254/16, with the cloud metadata address
  ['169.254.169.254', 'link-local'],
  ['169.254.0.1', 'link-local'],
  ['169.255.0.1', undefined],
  // CGNAT 100.64/10
  ['100.64.0.1', 'shared (carrier-grade NAT)'],
  ['100.127.255.255', 'shared (carrier-grade NAT)'],
  ['100.63.255.255', undefined],
  ['100.128.0.1', undefined],
  // 0.0.0.0/8
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  // TEST-NETs and benchmarking (RFC 5737, RFC 2544), and their public neighbours
  ['192.0.2.1', 'documentation (TEST-NET)'],
  ['192.0.2.255', 'documentation (TEST-NET)'],
  ['192.0.3.1', undefined],
  ['198.51.100.7', 'documentation (TEST-NET)'],
  ['198.51.101.1', undefined],
  ['203.0.113.200', 'documentation (TEST-NET)'],
  ['203.0.112.255', undefined],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.20.0.1', undefined],
  // IETF protocol assignments 192.0.0/24, AS112, AMT, 6to4 relay anycast
  ['192.0.0.8', 'reserved'],
  ['192.0.0.170', 'reserved'],
  ['192.31.196.1', 'special-purpose'],
  ['192.52.193.1', 'special-purpose'],
  ['192.88.99.1', 'reserved'],
  ['192.175.48.1', 'special-purpose'],
  // multicast 224/4 and reserved 240/4 (incl. broadcast)
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // public
  ['8.8.8.8', undefined],
  ['93.184.216.34', undefined],
  ['1.1.1.1', undefined],
  // IPv6
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fbff::1', undefined],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['2001:4860:4860::8888', undefined],
  ['2606:4700:4700::1111', undefined],
  ['[::1]', 'loopback'],
  // IPv4-mapped IPv6 (dotted and hex forms), IPv4-compatible, NAT64, 6to4
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:100.64.0.1', 'shared (carrier-grade NAT)'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
  ['::ffff:8.8.8.8', undefined],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::10.0.0.1', 'private'],
  ['64:ff9b::8.8.8.8', undefined],
  ['2002:7f00:0001::1', 'loopback'],
  ['2002:0808:0808::1', undefined],
  ['2002:c000:0201::1', 'documentation (TEST-NET)'],
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765): the IPv4 inside decides
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['::ffff:0:192.0.2.2', 'documentation (TEST-NET)'],
  ['::ffff:0:8.8.8.8', undefined],
  // NAT64: the well-known /96 by the IPv4 inside, the local-use /48 whole
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::c000:202', 'documentation (TEST-NET)'],
  ['64:ff9b:1::7f00:1', 'private'],
  ['64:ff9b:1:ffff::8.8.8.8', 'private'],
  ['64:ff9b:2::1', undefined],
  // IPv4-mapped TEST-NET, IPv4-compatible with a public IPv4 (deprecated: refused whole)
  ['::ffff:203.0.113.9', 'documentation (TEST-NET)'],
  ['::8.8.8.8', 'reserved'],
  // Teredo 2001::/32 (its IPv4 addresses are obfuscated and not where the packets go): refused whole
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'special-purpose'],
  ['2001::1', 'special-purpose'],
  // the rest of IETF protocol assignments 2001::/23, documentation, benchmarking, discard, AS112, SRv6
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'special-purpose'],
  ['2001:1ff:ffff::1', 'special-purpose'],
  ['2001:200::1', undefined],
  ['2001:db8::1', 'documentation (TEST-NET)'],
  ['3fff::1', 'documentation (TEST-NET)'],
  ['3fff:1000::1', undefined],
  ['100::1', 'reserved'],
  ['100:0:0:1::1', 'reserved'],
  ['100:0:0:2::1', undefined],
  ['2620:4f:8000::1', 'special-purpose'],
  ['2620:4f:8001::1', undefined],
  ['5f00::1', 'special-purpose'],
  // not an address at all: never trusted
  ['localhost', 'reserved'],
  ['not an address', 'reserved'],
];

describe('classifyAddress', () => {
  for (const [address, expected] of CLASSIFICATION_TABLE) {
    test(`${address} → ${expected ?? 'public'}`, () => {
      assert.equal(classifyAddress(address), expected);
    });
  }

  test('the first and last address of every range refused whole are refused', () => {
    // (the kind can be a more specific entry's: 2001:: is Teredo inside 2001::/23; the table above checks kinds)
    for (const [cidr, , , judgedByEmbeddedIpv4] of specialPurposeTable()) {
      if (judgedByEmbeddedIpv4) continue;
      const [first, prefix] = cidr.split('/') as [string, string];
      let last: string;
      if (first.includes(':')) {
        const value = (ipv6ToBigInt(first) as bigint) | ((1n << BigInt(128 - Number(prefix))) - 1n);
        last = (value.toString(16).padStart(32, '0').match(/.{4}/g) as string[]).join(':');
      } else {
        last = numberToIpv4((ipv4ToNumber(first) as number) + 2 ** (32 - Number(prefix)) - 1);
      }
      assert.notEqual(classifyAddress(first), undefined, `${first} in ${cidr}`);
      assert.notEqual(classifyAddress(last), undefined, `${last} in ${cidr}`);
    }
  });
});

function resolver(answers: Record<string, LookupAddress[]>): NetworkGuardOptions['resolveHost'] {
  return async (hostname) => {
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
}

const ANSWERS: Record<string, LookupAddress[]> = {
  'public.example': [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ],
  'rebinding.example': [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
  'metadata.example': [{ address: '169.254.169.254', family: 4 }],
  'mapped.example': [{ address: '::ffff:10.0.0.5', family: 6 }],
  'wiki.corp.example': [{ address: '10.1.2.3', family: 4 }],
};

const STRICT: NetworkGuardOptions = { allowPrivateNetworks: false, allowedHosts: [], resolveHost: resolver(ANSWERS) };

async function refusal(url: string, options: NetworkGuardOptions = STRICT): Promise<DestinationRefusedError> {
  try {
    await checkDestination(new URL(url), options);
  } catch (error) {
    assert.ok(error instanceof DestinationRefusedError, `expected a refusal, got ${String(error)}`);
    assert.ok(error instanceof ToolInputError, 'a refusal is an observation for the model, not a retry');
    return error;
  }
  assert.fail(`${url} was not refused`);
}

describe('checkDestination', () => {
  test('refuses a host when ANY of its addresses is internal, naming it and how to allow it', async () => {
    const error = await refusal('http://rebinding.example/page');
    assert.match(error.message, /rebinding\.example/);
    assert.match(error.message, /127\.0\.0\.1, a loopback address/);
    assert.match(error.message, /REACT_AGENT_VISIT_ALLOW_PRIVATE/);
    assert.match(error.message, /REACT_AGENT_VISIT_ALLOWED_HOSTS/);
  });

  test('names the cloud metadata service', async () => {
    assert.match((await refusal('http://metadata.example/latest/meta-data/')).message, /169\.254\.169\.254.*metadata/);
    assert.match((await refusal('http://169.254.169.254/latest/meta-data/')).message, /link-local.*metadata/);
  });

  test('refuses IP literals, including IPv6 and IPv4-mapped forms the URL parser normalises', async () => {
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://10.0.0.1/',
      'http://[fe80::1]/',
      'http://0.0.0.0/',
    ]) {
      await refusal(url);
    }
    assert.match(
      (await refusal('http://mapped.example/')).message,
      /it resolves to ::ffff:10\.0\.0\.5 \(which carries 10\.0\.0\.5\), a private address/,
    );
    assert.match(
      (await refusal('http://[::ffff:a9fe:a9fe]/')).message,
      /::ffff:a9fe:a9fe \(which carries 169\.254\.169\.254\), a link-local address \(the cloud metadata service\)/,
    );
  });

  test('refuses schemes other than http and https', async () => {
    assert.match((await refusal('ftp://public.example/file')).message, /only http and https/);
    assert.match((await refusal('file:///etc/passwd')).message, /only http and https/);
  });

  test('pins the connection to the checked addresses', async () => {
    const destination = await checkDestination(new URL('https://public.example/'), STRICT);
    assert.deepEqual(destination.pinnedAddresses, ANSWERS['public.example']);
    const lookup = destination.lookup;
    assert.ok(lookup);
    const call = (options: object) =>
      new Promise<unknown[]>((resolve) =>
        (lookup as (...args: unknown[]) => void)('public.example', options, (...results: unknown[]) =>
          resolve(results),
        ),
      );
    assert.deepEqual(await call({ all: true }), [null, ANSWERS['public.example']]);
    assert.deepEqual(await call({}), [null, '93.184.216.34', 4]);
    assert.deepEqual(await call({ family: 6 }), [null, '2606:2800:220:1:248:1893:25c8:1946', 6]);
    // whatever the host name asked for, only the checked addresses come back
    assert.deepEqual(await call({ all: true, family: 4 }), [null, [{ address: '93.184.216.34', family: 4 }]]);
  });

  test('public IP literals pass without a lookup', async () => {
    const destination = await checkDestination(new URL('http://93.184.216.34/'), {
      allowPrivateNetworks: false,
      allowedHosts: [],
      resolveHost: () => assert.fail('no lookup for a literal'),
    });
    assert.equal(destination.lookup, undefined);
  });

  test('allowed hosts and allowPrivateNetworks bypass the guard', async () => {
    await checkDestination(new URL('http://wiki.corp.example/'), { ...STRICT, allowedHosts: ['wiki.corp.example'] });
    await checkDestination(new URL('http://wiki.corp.example/'), { ...STRICT, allowedHosts: ['.corp.example'] });
    await checkDestination(new URL('http://127.0.0.1:9/'), { ...STRICT, allowedHosts: ['127.0.0.1:9'] });
    await checkDestination(new URL('http://[::1]:9/'), { ...STRICT, allowedHosts: ['[::1]:9'] });
    await checkDestination(new URL('http://[::1]:9/'), { ...STRICT, allowedHosts: ['[::1]:*'] });
    await checkDestination(new URL('http://rebinding.example/'), { ...STRICT, allowPrivateNetworks: true });
    await refusal('http://wiki.corp.example/', { ...STRICT, allowedHosts: ['corp.example.org'] });
  });

  test('an unresolvable host is an ordinary error, not a refusal', async () => {
    await assert.rejects(checkDestination(new URL('http://nowhere.example/'), STRICT), (error: unknown) => {
      assert.ok(!(error instanceof DestinationRefusedError));
      assert.match(String(error), /ENOTFOUND/);
      return true;
    });
  });
});

describe('isAllowedHost', () => {
  test('matches exact names case-insensitively, and subdomains of .domain entries', () => {
    assert.equal(isAllowedHost('Wiki.Corp.Example', 443, ['wiki.corp.example']), true);
    assert.equal(isAllowedHost('a.b.corp.example', 80, ['.corp.example']), true);
    assert.equal(isAllowedHost('corp.example', 80, ['.corp.example']), true);
    assert.equal(isAllowedHost('evilcorp.example', 80, ['.corp.example']), false);
    assert.equal(isAllowedHost('wiki.corp.example.evil.com', 80, ['wiki.corp.example']), false);
    assert.equal(isAllowedHost('anything', 80, []), false);
  });

  test('a bare host allows ports 80 and 443 only; host:port that port; host:* every port', () => {
    assert.equal(isAllowedHost('127.0.0.1', 80, ['127.0.0.1']), true);
    assert.equal(isAllowedHost('127.0.0.1', 443, ['127.0.0.1']), true);
    assert.equal(isAllowedHost('127.0.0.1', 8233, ['127.0.0.1']), false);
    assert.equal(isAllowedHost('127.0.0.1', 8233, ['127.0.0.1:8233']), true);
    assert.equal(isAllowedHost('127.0.0.1', 8234, ['127.0.0.1:8233']), false);
    assert.equal(isAllowedHost('127.0.0.1', 80, ['127.0.0.1:8233']), false);
    assert.equal(isAllowedHost('127.0.0.1', 65535, ['127.0.0.1:*']), true);
    assert.equal(isAllowedHost('a.corp.example', 8080, ['.corp.example:8080']), true);
    assert.equal(isAllowedHost('::1', 8080, ['[::1]:8080']), true);
    assert.equal(isAllowedHost('[::1]', 443, ['::1']), true);
    assert.equal(isAllowedHost('::1', 8080, ['::1']), false);
    // malformed entries allow nothing
    assert.equal(isAllowedHost('127.0.0.1', 80, ['127.0.0.1:http']), false);
  });

  test('a refusal on another port of an allowed host says how to allow that port', async () => {
    const error = await refusal('http://127.0.0.1:8233/api/v1/namespaces', { ...STRICT, allowedHosts: ['127.0.0.1'] });
    assert.match(error.message, /127\.0\.0\.1, a loopback address/);
    assert.match(
      error.message,
      /allows 127\.0\.0\.1 on other ports only \(a bare host means ports 80 and 443\); 127\.0\.0\.1:8233 would allow this one/,
    );
    await refusal('http://127.0.0.1:8234/', { ...STRICT, allowedHosts: ['127.0.0.1:8233'] });
  });
});

describe("the machine's own addresses", () => {
  const own = ['127.0.0.1', '::1', '93.184.216.34', 'fe80::fc:ff:fe00:1', '2606:4700:4700::1111'];

  test('an own address is refused whatever range it is in, also inside an IPv6 form', () => {
    assert.equal(classifyDestinationAddress('93.184.216.34', own), 'own');
    assert.equal(classifyDestinationAddress('::ffff:93.184.216.34', own), 'own');
    assert.equal(classifyDestinationAddress('64:ff9b::5db8:d822', own), 'own');
    assert.equal(classifyDestinationAddress('2002:5db8:d822::1', own), 'own');
    assert.equal(classifyDestinationAddress('2606:4700:4700:0:0:0:0:1111', own), 'own');
    assert.equal(classifyDestinationAddress('93.184.216.35', own), undefined);
    // a special-purpose range is named as such before it is found among the own addresses
    assert.equal(classifyDestinationAddress('127.0.0.1', own), 'loopback');
  });

  test('checkDestination refuses an own address, literal or resolved, naming it', async () => {
    const options = { ...STRICT, ownAddresses: () => own };
    assert.match(
      (await refusal('http://93.184.216.34:8233/', options)).message,
      /93\.184\.216\.34, an address of this machine's own network interfaces/,
    );
    assert.match(
      (await refusal('https://public.example/', options)).message,
      /public\.example is blocked: it resolves to 93\.184\.216\.34, an address of this machine's own/,
    );
    await checkDestination(new URL('https://public.example/'), { ...STRICT, ownAddresses: () => ['198.51.100.1'] });
    // by default, the interfaces of this machine: its loopback, and whatever else it has
    await refusal('http://[::ffff:127.0.0.1]/');
  });
});
