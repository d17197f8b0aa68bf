import { mergeUpstreams, parseGivenUpstreams, upstreamsAt } from './upstreams';

const devnets = [
  { network: 'opbnb-mainnet', url: 'http://127.0.0.1:7140' },
  { network: 'polygon-mainnet', url: 'http://127.0.0.1:7141' },
  { network: 'eth-mainnet', url: 'http://127.0.0.1:7142' },
];

describe('the local stack UPSTREAMS', () => {
  it('keeps every devnet when UPSTREAMS is unset or blank', () => {
    for (const text of [undefined, '', '  ']) {
      const merged = mergeUpstreams(devnets, parseGivenUpstreams(text));
      expect(merged.upstreams).toEqual({
        'opbnb-mainnet': ['http://127.0.0.1:7140'],
        'polygon-mainnet': ['http://127.0.0.1:7141'],
        'eth-mainnet': ['http://127.0.0.1:7142'],
      });
      expect(merged.networks).toEqual(['opbnb-mainnet', 'polygon-mainnet', 'eth-mainnet']);
    }
  });

  it('replaces the devnets for the keys the user names and keeps the others', () => {
    const given = parseGivenUpstreams(
      JSON.stringify({
        'polygon-mainnet': [
          'https://a.example/p',
          { http: 'https://b.example/p', ws: 'wss://b.example/ws' },
        ],
        'eth-sepolia': ['https://c.example/s'],
      }),
    );
    // the launcher starts no devnet for a named key
    const running = devnets.filter((devnet) => !(devnet.network in given));
    const merged = mergeUpstreams(running, given);
    expect(merged.upstreams).toEqual({
      'opbnb-mainnet': ['http://127.0.0.1:7140'],
      'eth-mainnet': ['http://127.0.0.1:7142'],
      'polygon-mainnet': [
        'https://a.example/p',
        { http: 'https://b.example/p', ws: 'wss://b.example/ws' },
      ],
      'eth-sepolia': ['https://c.example/s'],
    });
    expect(merged.networks.sort()).toEqual(
      ['eth-mainnet', 'eth-sepolia', 'opbnb-mainnet', 'polygon-mainnet'].sort(),
    );
  });

  it('serves sui-mainnet from UPSTREAMS but never indexes it', () => {
    const given = parseGivenUpstreams('{"sui-mainnet":["https://sui.example"]}');
    const merged = mergeUpstreams(devnets, given);
    expect(merged.upstreams['sui-mainnet']).toEqual(['https://sui.example']);
    expect(merged.networks).not.toContain('sui-mainnet');
  });

  it.each([
    ['not JSON', '{polygon', 'UPSTREAMS: must be a JSON object (network key → node URLs)'],
    [
      'an unknown key',
      '{"polygon":["https://a.example"]}',
      'UPSTREAMS: polygon: unknown network key "polygon"',
    ],
    ['a URL that is not one', '{"eth-mainnet":["node-a"]}', /^UPSTREAMS: eth-mainnet\.0: /],
    ['an empty list', '{"eth-mainnet":[]}', 'UPSTREAMS: eth-mainnet: needs at least one node URL'],
  ])('refuses %s with a line naming UPSTREAMS', (_, text, message) => {
    expect(() => parseGivenUpstreams(text)).toThrow(message);
  });
});

describe("a gateway's share of the stack UPSTREAMS", () => {
  const upstreams = {
    'opbnb-mainnet': ['http://127.0.0.1:7140'],
    'polygon-mainnet': ['http://127.0.0.1:7141'],
    'polygon-amoy': ['https://amoy.example'],
    'eth-mainnet': ['http://127.0.0.1:7142'],
    'sui-mainnet': ['https://sui.example'],
  };

  it('gives each endpoint only the networks it offers', () => {
    expect(Object.keys(upstreamsAt('eu', upstreams))).toEqual([
      'opbnb-mainnet',
      'polygon-mainnet',
      'polygon-amoy',
      'eth-mainnet',
    ]);
    // Amoy is not offered in asia (network-lookup), S only at the shared endpoint.
    expect(Object.keys(upstreamsAt('asia', upstreams))).not.toContain('polygon-amoy');
    expect(upstreamsAt('shared', upstreams)).toEqual({ 'sui-mainnet': ['https://sui.example'] });
  });
});
