import { isNetworkKey, type NetworkKey } from '@meridian/networks';
import { z } from 'zod';
import { upstreamTag } from './filter-id';

export interface UpstreamSpec {
  readonly url: string;
  /** WebSocket URL for subscriptions; derived from `url` (http→ws) unless given. */
  readonly wsUrl: string;
  /** Stable short tag used in filter ids (sha256 of the URL). */
  readonly tag: string;
}

const entry = z.union([z.url(), z.object({ http: z.url(), ws: z.url().optional() })]);
const schema = z.record(z.string(), z.array(entry));

/**
 * UPSTREAMS is a JSON object: network key → array of node URLs (or `{http, ws}` objects);
 * SUI_UPSTREAM_URLS (comma separated) adds network S. Unknown network keys are a config error.
 */
export function parseUpstreams(
  upstreamsJson: string,
  suiUrls: string,
): Map<NetworkKey, UpstreamSpec[]> {
  const parsed = schema.parse(JSON.parse(upstreamsJson));
  const result = new Map<NetworkKey, UpstreamSpec[]>();
  for (const [network, entries] of Object.entries(parsed)) {
    if (!isNetworkKey(network)) throw new Error(`UPSTREAMS: unknown network key "${network}"`);
    result.set(
      network,
      entries.map((e) =>
        specOf(typeof e === 'string' ? e : e.http, typeof e === 'string' ? undefined : e.ws),
      ),
    );
  }
  const sui = suiUrls
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (sui.length > 0)
    result.set('sui-mainnet', [...(result.get('sui-mainnet') ?? []), ...sui.map((u) => specOf(u))]);
  return result;
}

function specOf(url: string, ws?: string): UpstreamSpec {
  return { url, wsUrl: ws ?? url.replace(/^http/, 'ws'), tag: upstreamTag(url) };
}
