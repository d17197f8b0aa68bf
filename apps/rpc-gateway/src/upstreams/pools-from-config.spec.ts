import { configSchema } from '../config/config';
import { poolsFromConfig } from './pools-from-config';

/** What a deployment's env gives: every node configured everywhere, the endpoint its own. */
const configAt = (region: string, extra: Record<string, string> = {}) =>
  configSchema.parse({
    ...extra,
    REGION: region,
    HTTP_PORT: '8080',
    UPSTREAMS: JSON.stringify({
      'eth-mainnet': ['http://eth.example:8545'],
      'polygon-mainnet': ['http://polygon.example:8545'],
      'polygon-amoy': ['http://amoy.example:8545'],
    }),
    SUI_UPSTREAM_URLS: 'http://sui.example:9000',
  });

describe('poolsFromConfig: a pool for each configured network the endpoint offers', () => {
  it.each([
    ['shared', ['sui-mainnet'], ['eth-mainnet', 'polygon-mainnet', 'polygon-amoy']],
    ['eu', ['eth-mainnet', 'polygon-mainnet', 'polygon-amoy'], ['sui-mainnet']],
    ['asia', ['eth-mainnet', 'polygon-mainnet'], ['polygon-amoy', 'sui-mainnet']],
  ])('%s: pools %j, ignored %j', async (region, pooled, ignored) => {
    let heard: string[] = [];
    const pools = poolsFromConfig(configAt(region), (networks) => (heard = networks));
    try {
      expect([...pools.keys()].sort()).toEqual([...pooled].sort());
      expect(heard.sort()).toEqual([...ignored].sort());
    } finally {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    }
  });
});

describe('poolsFromConfig: the lag tolerance is per network (QA: 5 blocks of S are 1.25 s)', () => {
  it.each([
    [{}, { 'sui-mainnet': 40, 'eth-mainnet': 1, 'polygon-mainnet': 5 }],
    [{ MAX_LAG_MS: '1500' }, { 'sui-mainnet': 6, 'eth-mainnet': 1, 'polygon-mainnet': 1 }],
    [{ MAX_LAG_BLOCKS: '5' }, { 'sui-mainnet': 5, 'eth-mainnet': 5, 'polygon-mainnet': 5 }],
  ])('%j: %j', async (extra, expected) => {
    const pools = new Map([
      ...poolsFromConfig(configAt('eu', extra)),
      ...poolsFromConfig(configAt('shared', extra)),
    ]);
    try {
      expect({
        'sui-mainnet': pools.get('sui-mainnet')!.maxLagBlocks,
        'eth-mainnet': pools.get('eth-mainnet')!.maxLagBlocks,
        'polygon-mainnet': pools.get('polygon-mainnet')!.maxLagBlocks,
      }).toEqual(expected);
    } finally {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    }
  });
});
