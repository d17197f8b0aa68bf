import type { NetworkKey } from '@meridian/networks';
import type { AppConfig } from '../config/config';
import { parseUpstreams } from './upstream-config';
import { UpstreamPool } from './upstream-pool';

/** The upstream pool of every configured network (each process of a replica builds its own). */
export function poolsFromConfig(config: AppConfig): Map<NetworkKey, UpstreamPool> {
  const specs = parseUpstreams(config.UPSTREAMS, config.SUI_UPSTREAM_URLS);
  return new Map(
    [...specs].map(([network, list]) => [
      network,
      new UpstreamPool(network, list, {
        maxLagBlocks: config.MAX_LAG_BLOCKS,
        connections: config.UPSTREAM_CONNECTIONS,
      }),
    ]),
  );
}
