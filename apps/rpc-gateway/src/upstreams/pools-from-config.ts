import { NETWORKS, networksAt, type NetworkKey } from '@meridian/networks';
import type { AppConfig } from '../config/config';
import { upstreamSpecsOf, type UpstreamSpec } from './upstream-config';
import { UpstreamPool } from './upstream-pool';
import { lagToleranceBlocks } from './upstream-selector';

/**
 * The upstream pool of every configured network this endpoint offers (each process of a replica
 * builds its own). A network the endpoint does not offer (S outside the shared endpoint, the EVM
 * networks at it, Amoy in asia) gets no pool: its tokens are refused before any node, so its
 * nodes would only be health-checked, counted healthy in /metrics and in readiness (ADR 0212).
 * `ignored` hears which configured networks were left out.
 */
export function poolsFromConfig(
  config: AppConfig,
  ignored: (networks: NetworkKey[]) => void = () => undefined,
): Map<NetworkKey, UpstreamPool> {
  return new Map(
    offeredUpstreams(config, ignored).map(([network, list]) => [
      network,
      new UpstreamPool(network, list, {
        maxLagBlocks: lagToleranceBlocks(
          NETWORKS[network].blockTimeMs,
          config.MAX_LAG_MS,
          config.MAX_LAG_BLOCKS,
        ),
        connections: config.UPSTREAM_CONNECTIONS,
        breaker: {
          failures: config.UPSTREAM_BREAKER_FAILURES,
          cooldownMs: config.UPSTREAM_BREAKER_COOLDOWN_MS,
          maxCooldownMs: Math.max(
            config.UPSTREAM_BREAKER_COOLDOWN_MS,
            config.UPSTREAM_BREAKER_MAX_COOLDOWN_MS,
          ),
        },
      }),
    ]),
  );
}

/**
 * The configured networks this endpoint offers, with their nodes (what `poolsFromConfig` builds
 * pools of). None with a node: the endpoint serves nothing (serving-readiness, NO_NETWORK_SERVED).
 */
export function offeredUpstreams(
  config: Pick<AppConfig, 'REGION' | 'UPSTREAMS' | 'SUI_UPSTREAM_URLS'>,
  ignored: (networks: NetworkKey[]) => void = () => undefined,
): [NetworkKey, UpstreamSpec[]][] {
  const offered = new Set<NetworkKey>(networksAt(config.REGION).map((network) => network.key));
  const specs = [...upstreamSpecsOf(config.UPSTREAMS, config.SUI_UPSTREAM_URLS)];
  const left = specs.filter(([network]) => !offered.has(network)).map(([network]) => network);
  if (left.length > 0) ignored(left);
  return specs.filter(([network]) => offered.has(network));
}
