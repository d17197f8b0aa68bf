import { parseUpstreams as parseUpstreamUrls } from '@meridian/platform-config';
import type { NetworkKey } from '@meridian/networks';
import { upstreamFloorTag, upstreamTag } from './filter-id';

export interface UpstreamSpec {
  readonly url: string;
  /** WebSocket URL for subscriptions; derived from `url` (http→ws) unless given. */
  readonly wsUrl: string;
  /** Stable short tag used in filter ids (sha256 of the URL). */
  readonly tag: string;
  /** The tag of its log filters that carry their fromBlock (ADR 0211). */
  readonly floorTag: string;
}

/**
 * UPSTREAMS (the parser shared with chain-indexer, @meridian/platform-config) plus SUI_UPSTREAM_URLS,
 * each node tagged for filter ids. Unknown network keys are a config error.
 */
export function parseUpstreams(
  upstreamsJson: string,
  suiUrls: string,
): Map<NetworkKey, UpstreamSpec[]> {
  const result = new Map<NetworkKey, UpstreamSpec[]>();
  for (const [network, list] of parseUpstreamUrls(upstreamsJson, suiUrls))
    result.set(
      network,
      list.map((u) => ({
        url: u.url,
        wsUrl: u.wsUrl,
        tag: upstreamTag(u.url),
        floorTag: upstreamFloorTag(u.url),
      })),
    );
  return result;
}
