import { withSuiUpstreams, type UpstreamUrls } from '@meridian/platform-config';
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
 * UPSTREAMS plus SUI_UPSTREAM_URLS as the config parsed them (the parsers shared with
 * chain-indexer, @meridian/platform-config, which refuse a malformed value at start), each node
 * tagged for filter ids.
 */
export function upstreamSpecsOf(
  upstreams: ReadonlyMap<NetworkKey, UpstreamUrls[]>,
  suiUrls: readonly string[],
): Map<NetworkKey, UpstreamSpec[]> {
  const result = new Map<NetworkKey, UpstreamSpec[]>();
  for (const [network, list] of withSuiUpstreams(upstreams, suiUrls))
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
