import { NETWORK_KEYS, NETWORKS, reorgWindowBlocks } from '@meridian/networks';
import { CONFIRM_DEPTH_MAX } from './bounds';

it('every confirm_depth lies within the reorg window of every EVM network (a confirmation can still be retracted)', () => {
  for (const key of NETWORK_KEYS.filter((k) => NETWORKS[k].family === 'evm'))
    expect([key, reorgWindowBlocks(key) > CONFIRM_DEPTH_MAX]).toEqual([key, true]);
});
