import { finalizedHeight, REORG_WINDOW_BLOCKS, reorgWindowBlocks } from './finality';
import { NETWORKS } from './network.table';
import { NETWORK_KEYS } from './network.types';

describe('finality', () => {
  it('defines a reorg window for every network: 128 blocks, 256 on P, none on S', () => {
    expect(Object.keys(REORG_WINDOW_BLOCKS).sort()).toEqual([...NETWORK_KEYS].sort());
    for (const key of NETWORK_KEYS) {
      const { spec } = NETWORKS[key];
      expect([key, reorgWindowBlocks(key)]).toEqual([
        key,
        spec === 'S' ? 0 : spec === 'P' ? 256 : 128,
      ]);
    }
  });

  it('nothing within the window is final', () => {
    expect(finalizedHeight('eth-mainnet', undefined)).toBeUndefined();
    expect(finalizedHeight('eth-mainnet', 1_000)).toBe(872);
    expect(finalizedHeight('polygon-mainnet', 1_000)).toBe(744);
    expect(finalizedHeight('eth-mainnet', 100)).toBeLessThan(0);
  });
});
