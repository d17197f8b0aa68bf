import { DAY } from '@meridian/time';
import { E_METHODS, P_METHODS, R_METHODS, S_METHODS } from './method.table';
import { NETWORKS } from './network.table';
import {
  ALL_NETWORKS,
  endpointsOffering,
  isMethodOffered,
  isNetworkKey,
  isOffered,
  networkByChainId,
  networkByKey,
  networksAt,
} from './network-lookup';
import {
  ENDPOINTS,
  INTERFACES,
  NETWORK_KEYS,
  type Endpoint,
  type Interface,
  type NetworkKey,
} from './network.types';

describe('network descriptors', () => {
  it.each([
    // key, spec, family, chainId, hex, net_version, decimals, block time, parent, challenge
    ['opbnb-mainnet', 'R', 'evm', 204, '0xcc', '204', 18, 1_000, 56, 7 * DAY],
    ['opbnb-testnet', 'R', 'evm', 5611, '0x15eb', '5611', 18, 1_000, 97, 7 * DAY],
    ['polygon-mainnet', 'P', 'evm', 137, '0x89', '137', 18, 2_000, null, null],
    ['polygon-amoy', 'P', 'evm', 80002, '0x13882', '80002', 18, 2_000, null, null],
    ['eth-mainnet', 'E', 'evm', 1, '0x1', '1', 18, 12_000, null, null],
    ['eth-sepolia', 'E', 'evm', 11155111, '0xaa36a7', '11155111', 18, 12_000, null, null],
    ['eth-hoodi', 'E', 'evm', 560048, '0x88bb0', '560048', 18, 12_000, null, null],
    ['sui-mainnet', 'S', 'object-model', null, null, null, 9, 250, null, null],
  ] as const)(
    '%s is %s/%s chain %s (%s, net_version %s)',
    (
      key,
      spec,
      family,
      chainId,
      chainIdHex,
      netVersion,
      decimals,
      blockTimeMs,
      parent,
      challenge,
    ) => {
      const network = networkByKey(key);
      expect(network).toMatchObject({ key, spec, family, chainId, chainIdHex, netVersion });
      expect(network.nativeDecimals).toBe(decimals);
      expect(network.blockTimeMs).toBe(blockTimeMs);
      expect(network.parentChainId).toBe(parent);
      expect(network.challengePeriodMs).toBe(challenge);
    },
  );

  it('has exactly the COMPAT network keys, in table order', () => {
    expect(ALL_NETWORKS.map((n) => n.key)).toEqual([...NETWORK_KEYS]);
    expect(Object.keys(NETWORKS).sort()).toEqual([...NETWORK_KEYS].sort());
  });

  it('is frozen', () => {
    expect(Object.isFrozen(NETWORKS)).toBe(true);
    expect(Object.isFrozen(NETWORKS['eth-mainnet'])).toBe(true);
  });
});

describe('lookup', () => {
  it.each([
    ['eth-mainnet', true],
    ['sui-mainnet', true],
    ['polygon-amoy', true],
    ['polygon-mumbai', false],
    ['ETH-MAINNET', false],
    ['', false],
    [42, false],
    [undefined, false],
  ])('isNetworkKey(%p) = %p', (value, expected) => {
    expect(isNetworkKey(value)).toBe(expected);
    if (typeof value === 'string') expect(networkByKey(value) !== undefined).toBe(expected);
  });

  it.each([
    [204, 'opbnb-mainnet'],
    [5611, 'opbnb-testnet'],
    [137, 'polygon-mainnet'],
    [80002, 'polygon-amoy'],
    [1, 'eth-mainnet'],
    [11155111, 'eth-sepolia'],
    [560048, 'eth-hoodi'],
    [56, undefined],
    [0, undefined],
  ])('networkByChainId(%p) = %p', (chainId, key) => {
    expect(networkByChainId(chainId)?.key).toBe(key);
  });
});

describe('availability (spec table + COMPAT)', () => {
  const all: Record<NetworkKey, Partial<Record<Endpoint, Interface[]>>> = {
    'opbnb-mainnet': {
      eu: ['jsonrpc', 'websocket'],
      us: ['jsonrpc', 'websocket'],
      asia: ['jsonrpc', 'websocket'],
    },
    'opbnb-testnet': {
      eu: ['jsonrpc', 'websocket'],
      us: ['jsonrpc', 'websocket'],
      asia: ['jsonrpc', 'websocket'],
    },
    'polygon-mainnet': {
      eu: ['jsonrpc', 'websocket', 'grpc'],
      us: ['jsonrpc', 'websocket', 'grpc'],
      asia: ['jsonrpc', 'websocket', 'grpc'],
    },
    'polygon-amoy': { eu: ['jsonrpc', 'websocket', 'grpc'], us: ['jsonrpc', 'websocket', 'grpc'] },
    'eth-mainnet': {
      eu: ['jsonrpc', 'websocket'],
      us: ['jsonrpc', 'websocket'],
      asia: ['jsonrpc', 'websocket'],
    },
    'eth-sepolia': {
      eu: ['jsonrpc', 'websocket'],
      us: ['jsonrpc', 'websocket'],
      asia: ['jsonrpc', 'websocket'],
    },
    'eth-hoodi': {
      eu: ['jsonrpc', 'websocket'],
      us: ['jsonrpc', 'websocket'],
      asia: ['jsonrpc', 'websocket'],
    },
    'sui-mainnet': { shared: ['jsonrpc'] },
  };
  const rows = NETWORK_KEYS.flatMap((key) =>
    ENDPOINTS.flatMap((endpoint) =>
      INTERFACES.map(
        (iface) => [key, endpoint, iface, all[key][endpoint]?.includes(iface) ?? false] as const,
      ),
    ),
  );

  it.each(rows)('%s at %s over %s: %p', (key, endpoint, iface, expected) => {
    expect(isOffered(key, endpoint, iface)).toBe(expected);
    expect(isOffered(networkByKey(key), endpoint, iface)).toBe(expected);
  });

  it.each([
    [
      'eu',
      [
        'opbnb-mainnet',
        'opbnb-testnet',
        'polygon-mainnet',
        'polygon-amoy',
        'eth-mainnet',
        'eth-sepolia',
        'eth-hoodi',
      ],
    ],
    [
      'us',
      [
        'opbnb-mainnet',
        'opbnb-testnet',
        'polygon-mainnet',
        'polygon-amoy',
        'eth-mainnet',
        'eth-sepolia',
        'eth-hoodi',
      ],
    ],
    [
      'asia',
      [
        'opbnb-mainnet',
        'opbnb-testnet',
        'polygon-mainnet',
        'eth-mainnet',
        'eth-sepolia',
        'eth-hoodi',
      ],
    ],
    ['shared', ['sui-mainnet']],
  ] as const)('networksAt(%s)', (endpoint, keys) => {
    expect(networksAt(endpoint).map((n) => n.key)).toEqual(keys);
  });

  it.each([
    ['polygon-amoy', 'grpc', ['eu', 'us']],
    ['polygon-mainnet', 'grpc', ['eu', 'us', 'asia']],
    ['eth-mainnet', 'grpc', []],
    ['sui-mainnet', 'jsonrpc', ['shared']],
    ['sui-mainnet', 'websocket', []],
  ] as const)('endpointsOffering(%s, %s)', (key, iface, endpoints) => {
    expect(endpointsOffering(key, iface)).toEqual(endpoints);
  });
});

describe('method sets (spec method tables)', () => {
  it.each([
    ['R', R_METHODS, 37],
    ['P', P_METHODS, 49],
    ['E', E_METHODS, 53],
    ['S', S_METHODS, 2],
  ] as const)('table %s has %i distinct methods', (_letter, methods, count) => {
    expect(new Set(methods).size).toBe(methods.length);
    expect(methods).toHaveLength(count);
  });

  it.each([
    ['opbnb-mainnet', 'eth_getBlockReceipts', true],
    ['opbnb-testnet', 'eth_getBlockReceipts', true],
    ['opbnb-mainnet', 'eth_accounts', false],
    ['opbnb-mainnet', 'eth_getProof', true],
    ['opbnb-mainnet', 'eth_subscribe', true],
    ['opbnb-mainnet', 'debug_traceCall', false],
    ['opbnb-mainnet', 'rpc_modules', false],
    ['opbnb-mainnet', 'eth_getUncleCountByBlockHash', false],
    ['opbnb-mainnet', 'eth_sendTransaction', false],
    ['polygon-mainnet', 'eth_getUncleCountByBlockHash', true],
    ['polygon-amoy', 'eth_getUncleByBlockNumberAndIndex', true],
    ['polygon-mainnet', 'eth_accounts', true],
    ['polygon-mainnet', 'eth_sign', true],
    ['polygon-mainnet', 'eth_pendingTransactions', true],
    ['polygon-mainnet', 'eth_protocolVersion', true],
    ['polygon-mainnet', 'eth_getBlockReceipts', false],
    ['polygon-mainnet', 'debug_traceTransaction', false],
    ['polygon-mainnet', 'eth_getWork', false],
    ['eth-mainnet', 'debug_traceCall', true],
    ['eth-sepolia', 'debug_batchSendRawTransaction', true],
    ['eth-hoodi', 'eth_getBlockReceipts', true],
    ['eth-mainnet', 'eth_submitWork', true],
    ['eth-mainnet', 'eth_getWork', true],
    ['eth-mainnet', 'eth_getTransactionCount', false],
    ['eth-mainnet', 'eth_sendTransaction', false],
    ['eth-mainnet', 'eth_getUncleCountByBlockHash', false],
    ['eth-mainnet', 'trace_transaction', false],
    ['sui-mainnet', 'suix_getLatestSuiSystemState', true],
    ['sui-mainnet', 'sui_tryMultiGetPastObjects', true],
    ['sui-mainnet', 'eth_chainId', false],
    ['sui-mainnet', 'sui_getObject', false],
    ['eth-mainnet', 'ETH_BLOCKNUMBER', false],
    ['eth-mainnet', '', false],
  ] as const)('%s offers %s: %p', (key, method, expected) => {
    expect(isMethodOffered(key, method)).toBe(expected);
  });

  it('S has exactly its two methods', () => {
    expect([...networkByKey('sui-mainnet').methods].sort()).toEqual([
      'sui_tryMultiGetPastObjects',
      'suix_getLatestSuiSystemState',
    ]);
  });

  it.each(NETWORK_KEYS.filter((k) => k !== 'sui-mainnet'))(
    '%s answers the methods every EVM table lists',
    (key) => {
      for (const method of [
        'eth_chainId',
        'eth_blockNumber',
        'eth_call',
        'eth_getLogs',
        'net_version',
      ]) {
        expect(isMethodOffered(key, method)).toBe(true);
      }
    },
  );
});
