import { NETWORKS, networksAt, type Endpoint, type NetworkKey } from '@meridian/networks';
import { upstreamsJsonSchema } from '@meridian/platform-config';

/** One network's nodes as UPSTREAMS writes them: URL strings or `{http, ws}` objects. */
type UpstreamEntries = ReadonlyArray<string | { http: string; ws?: string | undefined }>;

/** An exported UPSTREAMS, checked: network key → the user's nodes. */
export type GivenUpstreams = Readonly<Partial<Record<NetworkKey, UpstreamEntries>>>;

/**
 * The user's UPSTREAMS (unset or blank: none), checked with the schema the gateway and the indexer
 * use, so a mistake stops `npm start` before anything runs, with a line naming the variable.
 */
export function parseGivenUpstreams(text: string | undefined): GivenUpstreams {
  if (text === undefined || text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('UPSTREAMS: must be a JSON object (network key → node URLs)');
  }
  const parsed = upstreamsJsonSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`UPSTREAMS: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  for (const [network, entries] of Object.entries(parsed.data))
    if (entries.length === 0) throw new Error(`UPSTREAMS: ${network}: needs at least one node URL`);
  return parsed.data as GivenUpstreams;
}

/**
 * The stack's UPSTREAMS and NETWORKS. The user's networks replace the devnets for the keys they
 * name (the launcher starts no devnet for those); every other devnet stays. NETWORKS, what
 * chain-indexer follows and webhook-matcher accepts webhooks on, is every EVM network with a node:
 * network S (sui-mainnet) is served by the shared gateway only, never indexed.
 */
export function mergeUpstreams(
  devnets: ReadonlyArray<{ network: string; url: string }>,
  given: GivenUpstreams,
): { upstreams: Record<string, UpstreamEntries>; networks: string[] } {
  const upstreams: Record<string, UpstreamEntries> = {};
  for (const devnet of devnets)
    if (!(devnet.network in given)) upstreams[devnet.network] = [devnet.url];
  Object.assign(upstreams, given);
  const networks = Object.keys(upstreams).filter(
    (key) => NETWORKS[key as NetworkKey].family === 'evm',
  );
  return { upstreams, networks };
}

/**
 * The entries of the stack's UPSTREAMS for the networks `endpoint` offers: what its gateway is
 * given, as a deployment gives each region's gateway its own upstreams.json.
 */
export function upstreamsAt(
  endpoint: Endpoint,
  upstreams: Readonly<Record<string, UpstreamEntries>>,
): Record<string, UpstreamEntries> {
  const offered = new Set<string>(networksAt(endpoint).map((network) => network.key));
  return Object.fromEntries(Object.entries(upstreams).filter(([key]) => offered.has(key)));
}
