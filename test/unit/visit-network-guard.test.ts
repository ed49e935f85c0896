import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, test } from '@jest/globals';
import { checkDestination, classifyAddress, DestinationRefusedError, isAllowedHost, type BlockedAddressKind, type NetworkGuardOptions } from '../../activities/tools/visit/network-guard';
import { ToolInputError } from '../../activities/tools/tool-definition';

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
    for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://2130706433/', 'http://0x7f.1/', 'http://10.0.0.1/', 'http://[fe80::1]/', 'http://0.0.0.0/']) {
      await refusal(url);
    }
    await refusal('http://mapped.example/');
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
    const call = (options: object) => new Promise<unknown[]>((resolve) => (lookup as (...args: unknown[]) => void)('public.example', options, (...results: unknown[]) => resolve(results)));
    assert.deepEqual(await call({ all: true }), [null, ANSWERS['public.example']]);
    assert.deepEqual(await call({}), [null, '93.184.216.34', 4]);
    assert.deepEqual(await call({ family: 6 }), [null, '2606:2800:220:1:248:1893:25c8:1946', 6]);
    // whatever the host name asked for, only the checked addresses come back
    assert.deepEqual(await call({ all: true, family: 4 }), [null, [{ address: '93.184.216.34', family: 4 }]]);
  });

  test('public IP literals pass without a lookup', async () => {
    const destination = await checkDestination(new URL('http://93.184.216.34/'), { allowPrivateNetworks: false, allowedHosts: [], resolveHost: () => assert.fail('no lookup for a literal') });
    assert.equal(destination.lookup, undefined);
  });

  test('allowed hosts and allowPrivateNetworks bypass the guard', async () => {
    await checkDestination(new URL('http://wiki.corp.example/'), { ...STRICT, allowedHosts: ['wiki.corp.example'] });
    await checkDestination(new URL('http://wiki.corp.example/'), { ...STRICT, allowedHosts: ['.corp.example'] });
    await checkDestination(new URL('http://127.0.0.1:9/'), { ...STRICT, allowedHosts: ['127.0.0.1'] });
    await checkDestination(new URL('http://[::1]:9/'), { ...STRICT, allowedHosts: ['[::1]'] });
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
    assert.equal(isAllowedHost('Wiki.Corp.Example', ['wiki.corp.example']), true);
    assert.equal(isAllowedHost('a.b.corp.example', ['.corp.example']), true);
    assert.equal(isAllowedHost('corp.example', ['.corp.example']), true);
    assert.equal(isAllowedHost('evilcorp.example', ['.corp.example']), false);
    assert.equal(isAllowedHost('wiki.corp.example.evil.com', ['wiki.corp.example']), false);
    assert.equal(isAllowedHost('anything', []), false);
  });
});
