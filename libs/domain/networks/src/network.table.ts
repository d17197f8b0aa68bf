import { DAY } from '@meridian/time';
import { DEPRECATED_METHODS, E_METHODS, P_METHODS, R_METHODS, S_METHODS } from './method.table';
import type { Endpoint, Interface, Network, NetworkKey } from './network.types';

type Availability = Network['availability'];

const everyRegion = (interfaces: readonly Interface[]): Availability => ({
  eu: interfaces,
  us: interfaces,
  asia: interfaces,
});

/** The deprecated ones of a network's methods, or null: the relay asks only when there are any. */
const deprecatedOf = (methods: readonly string[]): ReadonlySet<string> | null => {
  const deprecated = methods.filter((method) => DEPRECATED_METHODS.has(method));
  return deprecated.length === 0 ? null : new Set(deprecated);
};

const hex = (chainId: number): string => `0x${chainId.toString(16)}`;

const evm = (
  fields: Omit<
    Network,
    'family' | 'chainIdHex' | 'netVersion' | 'chainId' | 'methods' | 'deprecatedMethods'
  > & {
    chainId: number;
    methods: readonly string[];
  },
): Network =>
  Object.freeze({
    ...fields,
    family: 'evm' as const,
    chainIdHex: hex(fields.chainId),
    netVersion: String(fields.chainId),
    methods: new Set(fields.methods),
    deprecatedMethods: deprecatedOf(fields.methods),
  });

/**
 * The single table of networks. Availability is the spec's availability table (R, P) completed
 * by COMPAT (E in every region over JSON-RPC and WebSocket; S only at the shared endpoint).
 */
export const NETWORKS: Readonly<Record<NetworkKey, Network>> = Object.freeze({
  'opbnb-mainnet': evm({
    key: 'opbnb-mainnet',
    spec: 'R',
    displayName: 'opBNB Mainnet',
    testnet: false,
    chainId: 204,
    nativeSymbol: 'BNB',
    nativeDecimals: 18,
    blockTimeMs: 1_000,
    parentChainId: 56,
    challengePeriodMs: 7 * DAY,
    availability: everyRegion(['jsonrpc', 'websocket']),
    methods: R_METHODS,
  }),
  'opbnb-testnet': evm({
    key: 'opbnb-testnet',
    spec: 'R',
    displayName: 'opBNB Testnet',
    testnet: true,
    chainId: 5611,
    nativeSymbol: 'tBNB',
    nativeDecimals: 18,
    blockTimeMs: 1_000,
    // The spec names only the mainnet's parent (56); the testnet settles to the BNB testnet.
    parentChainId: 97,
    challengePeriodMs: 7 * DAY,
    availability: everyRegion(['jsonrpc', 'websocket']),
    methods: R_METHODS,
  }),
  'polygon-mainnet': evm({
    key: 'polygon-mainnet',
    spec: 'P',
    displayName: 'Polygon PoS Mainnet',
    testnet: false,
    chainId: 137,
    nativeSymbol: 'POL',
    nativeDecimals: 18,
    blockTimeMs: 2_000,
    parentChainId: null,
    challengePeriodMs: null,
    availability: everyRegion(['jsonrpc', 'websocket', 'grpc']),
    methods: P_METHODS,
  }),
  'polygon-amoy': evm({
    key: 'polygon-amoy',
    spec: 'P',
    displayName: 'Polygon Amoy Testnet',
    testnet: true,
    chainId: 80002,
    nativeSymbol: 'POL',
    nativeDecimals: 18,
    blockTimeMs: 2_000,
    parentChainId: null,
    challengePeriodMs: null,
    // Spec availability table: Singapore "no".
    availability: { eu: ['jsonrpc', 'websocket', 'grpc'], us: ['jsonrpc', 'websocket', 'grpc'] },
    methods: P_METHODS,
  }),
  'eth-mainnet': evm({
    key: 'eth-mainnet',
    spec: 'E',
    displayName: 'Ethereum Mainnet',
    testnet: false,
    chainId: 1,
    nativeSymbol: 'ETH',
    nativeDecimals: 18,
    blockTimeMs: 12_000,
    parentChainId: null,
    challengePeriodMs: null,
    availability: everyRegion(['jsonrpc', 'websocket']),
    methods: E_METHODS,
  }),
  'eth-sepolia': evm({
    key: 'eth-sepolia',
    spec: 'E',
    displayName: 'Ethereum Sepolia',
    testnet: true,
    chainId: 11_155_111,
    nativeSymbol: 'ETH',
    nativeDecimals: 18,
    blockTimeMs: 12_000,
    parentChainId: null,
    challengePeriodMs: null,
    availability: everyRegion(['jsonrpc', 'websocket']),
    methods: E_METHODS,
  }),
  'eth-hoodi': evm({
    key: 'eth-hoodi',
    spec: 'E',
    displayName: 'Ethereum Hoodi',
    testnet: true,
    chainId: 560_048,
    nativeSymbol: 'ETH',
    nativeDecimals: 18,
    blockTimeMs: 12_000,
    parentChainId: null,
    challengePeriodMs: null,
    availability: everyRegion(['jsonrpc', 'websocket']),
    methods: E_METHODS,
  }),
  'sui-mainnet': Object.freeze({
    key: 'sui-mainnet',
    spec: 'S',
    family: 'object-model',
    displayName: 'Sui Mainnet',
    testnet: false,
    chainId: null,
    chainIdHex: null,
    netVersion: null,
    nativeSymbol: 'SUI',
    // 1 SUI = 10^9 MIST.
    nativeDecimals: 9,
    // Checkpoint interval, the closest thing S has to a block time.
    blockTimeMs: 250,
    parentChainId: null,
    challengePeriodMs: null,
    availability: { shared: ['jsonrpc'] } satisfies Partial<Record<Endpoint, readonly Interface[]>>,
    methods: new Set(S_METHODS),
    deprecatedMethods: deprecatedOf(S_METHODS),
  }),
});
