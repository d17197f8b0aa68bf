import { firstRefused, guardedLookup, refusedLiteral, type Resolver } from './guarded-lookup';

/** A fake DNS (named so): the internet's resolvers cannot be reached from tests. */
function fakeDns(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

function lookupOnce(
  resolver: Resolver,
  hostname: string,
  all: boolean,
  allowLoopback = false,
): Promise<{ error: Error | null; address: unknown; family?: number }> {
  return new Promise((resolve) =>
    guardedLookup({ allowLoopback }, resolver)(hostname, { all }, (error, address, family) =>
      resolve({ error, address, ...(family === undefined ? {} : { family }) }),
    ),
  );
}

describe('send-time SSRF guard', () => {
  const dns = fakeDns({
    'public.example.com': ['93.184.216.34'],
    'inside.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.216.34', '192.168.1.1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'nat64.example.com': ['64:ff9b::a00:1'],
    'nat64-local.example.com': ['64:ff9b:1:a00:0:7:808:808'],
    'v4-compatible.example.com': ['::a00:1'],
    'metadata.example.com': ['169.254.169.254'],
    'v6.example.com': ['2606:4700::1111'],
  });

  it('hands the socket the address it checked', async () => {
    expect(await lookupOnce(dns, 'public.example.com', false)).toEqual({
      error: null,
      address: '93.184.216.34',
      family: 4,
    });
    const all = await lookupOnce(dns, 'v6.example.com', true);
    expect(all.address).toEqual([{ address: '2606:4700::1111', family: 6 }]);
  });

  it.each([
    ['inside.example.com', '10.0.0.5', 'private'],
    ['mixed.example.com', '192.168.1.1', 'private'],
    ['mapped.example.com', '::ffff:127.0.0.1', 'loopback'],
    ['nat64.example.com', '64:ff9b::a00:1', 'rfc6052:private'],
    ['nat64-local.example.com', '64:ff9b:1:a00:0:7:808:808', 'nat64LocalUse'],
    ['v4-compatible.example.com', '::a00:1', 'ipv4Compatible'],
    ['metadata.example.com', '169.254.169.254', 'linkLocal'],
  ])('refuses %s (resolves to %s: %s)', async (host, address, reason) => {
    const { error } = await lookupOnce(dns, host, true);
    expect(error).toMatchObject({ code: 'EREFUSED_ADDRESS', address, reason });
  });

  it('refuses a real name resolving to loopback unless loopback is allow-listed', async () => {
    const refused = await lookupOnce(
      async () => [{ address: '127.0.0.1', family: 4 }],
      'localhost',
      false,
    );
    expect(refused.error).toMatchObject({ code: 'EREFUSED_ADDRESS', reason: 'loopback' });
    const allowed = await lookupOnce(
      async () => [{ address: '127.0.0.1', family: 4 }],
      'localhost',
      false,
      true,
    );
    expect(allowed).toEqual({ error: null, address: '127.0.0.1', family: 4 });
  });

  it('passes DNS failures through (class dns)', async () => {
    const { error } = await lookupOnce(dns, 'nowhere.example.com', false);
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('judges literal IPs (which never reach lookup)', () => {
    expect(refusedLiteral('10.1.2.3', {})).toMatchObject({ reason: 'private' });
    expect(refusedLiteral('[::1]', {})).toMatchObject({ reason: 'loopback' });
    expect(refusedLiteral('[::1]', { allowLoopback: true })).toBeNull();
    expect(refusedLiteral('8.8.8.8', {})).toBeNull();
    expect(refusedLiteral('hooks.example.com', {})).toBeNull();
    expect(firstRefused(['8.8.8.8', '0.0.0.0'], {})).toEqual({
      address: '0.0.0.0',
      reason: 'unspecified',
    });
  });
});
