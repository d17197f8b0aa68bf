import { z } from 'zod';
import { parseConfig } from './load-config';
import { parseUpstreams, upstreamsEnv } from './upstreams';

describe('UPSTREAMS', () => {
  it('parses URLs and {http, ws} entries, deriving ws from http', () => {
    const map = parseUpstreams(
      JSON.stringify({
        'eth-mainnet': ['https://a.example/x', { http: 'http://b:8545', ws: 'ws://b:8546' }],
      }),
    );
    expect(map.get('eth-mainnet')).toEqual([
      { url: 'https://a.example/x', wsUrl: 'wss://a.example/x' },
      { url: 'http://b:8545', wsUrl: 'ws://b:8546' },
    ]);
  });

  it('adds network S from SUI_UPSTREAM_URLS', () => {
    const map = parseUpstreams('{}', 'https://s1.example, https://s2.example');
    expect(map.get('sui-mainnet')?.map((u) => u.url)).toEqual([
      'https://s1.example',
      'https://s2.example',
    ]);
  });

  it.each([
    ['{"eth-mainnet":["not a url"]}', /eth-mainnet/],
    ['{"bitcoin":["http://a"]}', /unknown network key "bitcoin"/],
    ['{"eth-mainnet":[{"http":"http://a","extra":1}]}', /eth-mainnet/],
  ])('refuses %s', (json, message) => {
    expect(() => parseUpstreams(json)).toThrow(message);
  });

  it('as an env variable: one config error naming UPSTREAMS', () => {
    const schema = z.object({ UPSTREAMS: upstreamsEnv });
    expect(() => parseConfig(schema, { UPSTREAMS: '{not json' })).toThrow(
      /UPSTREAMS is invalid: must be a JSON object/,
    );
    expect(() => parseConfig(schema, { UPSTREAMS: '{"mars":["http://a"]}' })).toThrow(
      /UPSTREAMS is invalid: mars: unknown network key/,
    );
    expect(parseConfig(schema, {}).UPSTREAMS.size).toBe(0);
  });
});
