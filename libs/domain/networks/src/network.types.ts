export const NETWORK_KEYS = [
  'opbnb-mainnet',
  'opbnb-testnet',
  'polygon-mainnet',
  'polygon-amoy',
  'eth-mainnet',
  'eth-sepolia',
  'eth-hoodi',
  'sui-mainnet',
] as const;

/** The name of a network everywhere: config, API, events, access tokens (COMPAT "Node access"). */
export type NetworkKey = (typeof NETWORK_KEYS)[number];

export const REGIONS = ['eu', 'us', 'asia'] as const;
/** eu = Frankfurt, us = New York, asia = Singapore (the spec's availability columns). */
export type Region = (typeof REGIONS)[number];

export const ENDPOINTS = [...REGIONS, 'shared'] as const;
/** A public base address: one per region, plus `shared` ({shared_rpc_url}) for network S. */
export type Endpoint = (typeof ENDPOINTS)[number];

export const INTERFACES = ['jsonrpc', 'websocket', 'grpc'] as const;
export type Interface = (typeof INTERFACES)[number];

/** The spec names networks by letter; R/P/E are EVM, S is the object-model network. */
export type SpecLetter = 'R' | 'P' | 'E' | 'S';

export type NetworkFamily = 'evm' | 'object-model';

export interface Network {
  readonly key: NetworkKey;
  readonly spec: SpecLetter;
  readonly family: NetworkFamily;
  readonly displayName: string;
  readonly testnet: boolean;
  /** EVM chain id; null for the object-model network, which has none. */
  readonly chainId: number | null;
  /** `eth_chainId` answer, e.g. "0xcc"; null when chainId is null. */
  readonly chainIdHex: string | null;
  /** `net_version` answer (decimal text); null when chainId is null. */
  readonly netVersion: string | null;
  readonly nativeSymbol: string;
  readonly nativeDecimals: number;
  /** Typical time between blocks (checkpoints for S); used for polling and cache horizons. */
  readonly blockTimeMs: number;
  /** Chain id of the settlement chain for rollups (R); null otherwise. */
  readonly parentChainId: number | null;
  /** Optimistic-rollup challenge period (R); null otherwise. */
  readonly challengePeriodMs: number | null;
  /** Interfaces offered at each endpoint; an endpoint missing here does not serve the network. */
  readonly availability: Readonly<Partial<Record<Endpoint, readonly Interface[]>>>;
  /** The exact method set relayed for this network (the spec's method table). */
  readonly methods: ReadonlySet<string>;
  /** Its methods that are deprecated (`DEPRECATED_METHODS`); null when none is. */
  readonly deprecatedMethods: ReadonlySet<string> | null;
}
