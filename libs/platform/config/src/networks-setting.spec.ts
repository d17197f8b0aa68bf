import { z } from 'zod';
import { ConfigError, parseConfig } from './load-config';
import { networkKeysSetting } from './networks-setting';

describe('NETWORKS (networkKeysSetting)', () => {
  const schema = z.object({ NETWORKS: networkKeysSetting(['eth-mainnet', 'polygon-mainnet']) });
  const parse = (NETWORKS?: string) => parseConfig(schema, { NETWORKS }).NETWORKS;

  it('reads comma-separated keys, trimmed, duplicates collapsed', () => {
    expect(parse(' opbnb-mainnet, eth-mainnet ,opbnb-mainnet,')).toEqual([
      'opbnb-mainnet',
      'eth-mainnet',
    ]);
  });

  it('is the fallback when unset and none when set empty', () => {
    expect(parse()).toEqual(['eth-mainnet', 'polygon-mainnet']);
    expect(parse('')).toEqual([]);
    expect(parseConfig(z.object({ NETWORKS: networkKeysSetting() }), {}).NETWORKS).toEqual([]);
  });

  it('refuses an unknown key in one line naming the variable', () => {
    expect(() => parse('eth-mainnet,bitcoin')).toThrow(
      new ConfigError('NETWORKS', 'is invalid: unknown network key "bitcoin"'),
    );
  });
});
