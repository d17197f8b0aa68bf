import { isNetworkKey, type NetworkKey } from '@meridian/networks';
import { z } from 'zod';

/** One node of a network: its HTTP URL and the WebSocket URL used for subscriptions. */
export interface UpstreamUrls {
  readonly url: string;
  /** Derived from `url` (http→ws, https→wss) unless given. */
  readonly wsUrl: string;
}

const entry = z.union([z.url(), z.object({ http: z.url(), ws: z.url().optional() }).strict()]);

/**
 * The JSON shape of UPSTREAMS, shared by rpc-gateway and chain-indexer: an object from network
 * key to a list of node URLs, each a string or `{http, ws}`. Unknown network keys are refused.
 */
export const upstreamsJsonSchema = z
  .record(z.string(), z.array(entry))
  .superRefine((value, ctx) => {
    for (const network of Object.keys(value)) {
      if (!isNetworkKey(network))
        ctx.addIssue({
          code: 'custom',
          message: `unknown network key "${network}"`,
          path: [network],
        });
    }
  });

/**
 * An env variable holding UPSTREAMS: parsed and checked at config load, so a malformed value
 * stops the app at start with one line naming the variable.
 */
export const upstreamsEnv = z
  .string()
  .default('{}')
  .transform((text, ctx) => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object (network key → URLs)' });
      return z.NEVER;
    }
    const parsed = upstreamsJsonSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      ctx.addIssue({
        code: 'custom',
        message: `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`,
      });
      return z.NEVER;
    }
    return toUpstreamMap(parsed.data);
  });

function toUpstreamMap(
  parsed: z.output<typeof upstreamsJsonSchema>,
): Map<NetworkKey, UpstreamUrls[]> {
  const result = new Map<NetworkKey, UpstreamUrls[]>();
  for (const [network, entries] of Object.entries(parsed)) {
    if (!isNetworkKey(network)) continue; // refused by the schema above
    result.set(
      network,
      entries.map((e) =>
        upstreamUrlsOf(
          typeof e === 'string' ? e : e.http,
          typeof e === 'string' ? undefined : e.ws,
        ),
      ),
    );
  }
  return result;
}

const splitUrlList = (text: string): string[] =>
  text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);

/**
 * An env variable holding node URLs, comma separated (SUI_UPSTREAM_URLS): each checked at config
 * load, so a value that is not a URL stops the app at start with one line naming the variable,
 * not a TypeError once the pools are built.
 */
export const upstreamUrlListEnv = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const urls = splitUrlList(text);
    const bad = urls.find((url) => !z.url().safeParse(url).success);
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(bad.slice(0, 64))} is not a URL (node URLs, comma separated)`,
      });
      return z.NEVER;
    }
    return urls;
  });

/** Network S's nodes (SUI_UPSTREAM_URLS) added to an UPSTREAMS map, after any it names. */
export function withSuiUpstreams(
  upstreams: ReadonlyMap<NetworkKey, UpstreamUrls[]>,
  suiUrls: readonly string[],
): Map<NetworkKey, UpstreamUrls[]> {
  const result = new Map(upstreams);
  if (suiUrls.length > 0)
    result.set('sui-mainnet', [
      ...(result.get('sui-mainnet') ?? []),
      ...suiUrls.map((u) => upstreamUrlsOf(u)),
    ]);
  return result;
}

/**
 * Parses UPSTREAMS (and SUI_UPSTREAM_URLS, comma separated, which adds network S). Throws on a
 * malformed value or an unknown network key.
 */
export function parseUpstreams(
  upstreamsJson: string,
  suiUrls = '',
): Map<NetworkKey, UpstreamUrls[]> {
  const parsed = upstreamsJsonSchema.safeParse(JSON.parse(upstreamsJson));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`UPSTREAMS: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  return withSuiUpstreams(toUpstreamMap(parsed.data), splitUrlList(suiUrls));
}

export function upstreamUrlsOf(url: string, ws?: string): UpstreamUrls {
  return { url, wsUrl: ws ?? url.replace(/^http/, 'ws') };
}
