import { configSchema } from '../config/config';
import { poolsFromConfig } from './pools-from-config';

/** What a deployment's env gives: every node configured everywhere, the endpoint its own. */
const configAt = (region: string) =>
  configSchema.parse({
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
