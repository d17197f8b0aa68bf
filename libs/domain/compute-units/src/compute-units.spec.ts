import { NETWORKS } from '@meridian/networks';
import {
  CHAIN_MULTIPLIER,
  CU_PER_DELIVERY_ATTEMPT,
  cuForBatch,
  cuForCall,
  cuForDeliveryAttempts,
  methodMultiplier,
  spendableCu,
} from './compute-units';

describe('method multiplier', () => {
  it.each([
    ['eth_blockNumber', 1],
    ['eth_call', 1],
    ['eth_getLogs', 1],
    ['suix_getLatestSuiSystemState', 1],
    ['debug_traceTransaction', 2],
    ['debug_traceCall', 2],
    ['debug_getBadBlocks', 2],
    ['debug_batchSendRawTransaction', 2],
    ['trace_call', 2],
    ['trace_transaction', 2],
    ['txpool_status', 2],
    ['trace_replayTransaction', 4],
    ['trace_block', 1],
    ['txpool_content', 1],
    ['DEBUG_traceCall', 1],
    ['debug', 1],
  ])('%s × %i', (method, multiplier) => {
    expect(methodMultiplier(method)).toBe(multiplier);
  });
});

describe('cuForCall', () => {
  it.each([
    ['opbnb-mainnet', 'eth_blockNumber', false, 20],
    ['opbnb-testnet', 'eth_call', true, 40],
    ['polygon-mainnet', 'eth_getLogs', false, 20],
    ['polygon-amoy', 'eth_getLogs', true, 40],
    ['eth-mainnet', 'eth_chainId', false, 20],
    ['eth-mainnet', 'debug_traceTransaction', false, 40],
    ['eth-mainnet', 'debug_traceTransaction', true, 80],
    ['eth-sepolia', 'trace_replayTransaction', false, 80],
    ['eth-hoodi', 'trace_replayTransaction', true, 160],
    ['eth-mainnet', 'txpool_status', false, 40],
    ['sui-mainnet', 'suix_getLatestSuiSystemState', false, 100],
    ['sui-mainnet', 'sui_tryMultiGetPastObjects', true, 200],
  ] as const)('%s %s archive=%p → %i CU', (network, method, archive, cu) => {
    expect(cuForCall(network, method, { archive })).toBe(cu);
    expect(cuForCall(NETWORKS[network], method, { archive })).toBe(cu);
    expect(Number.isSafeInteger(cuForCall(network, method, { archive }))).toBe(true);
  });

  it('defaults to a full node', () => {
    expect(cuForCall('eth-mainnet', 'eth_call')).toBe(20);
  });

  it('chain multipliers come from COMPAT', () => {
    expect(CHAIN_MULTIPLIER).toEqual({ R: 20, P: 20, E: 20, S: 100 });
  });
});

describe('cuForBatch', () => {
  it.each([
    ['eth-mainnet', [], false, 0],
    ['eth-mainnet', ['eth_blockNumber'], false, 20],
    ['eth-mainnet', ['eth_blockNumber', 'eth_chainId', 'debug_traceCall'], false, 80],
    ['eth-mainnet', ['eth_blockNumber', 'trace_replayTransaction'], true, 200],
    ['sui-mainnet', ['suix_getLatestSuiSystemState', 'sui_tryMultiGetPastObjects'], false, 200],
  ] as const)('%s %j archive=%p → %i CU', (network, methods, archive, cu) => {
    expect(cuForBatch(network, methods, { archive })).toBe(cu);
    const sum = methods.reduce(
      (total, method) => total + cuForCall(network, method, { archive }),
      0,
    );
    expect(cuForBatch(network, methods, { archive })).toBe(sum);
  });

  it('accepts any iterable', () => {
    expect(cuForBatch('polygon-mainnet', new Set(['eth_call', 'eth_getLogs']))).toBe(40);
  });
});

describe('delivery attempts', () => {
  it.each([
    [0, 0],
    [1, 25],
    [8, 200],
  ])('%i attempts → %i CU', (attempts, cu) => {
    expect(cuForDeliveryAttempts(attempts)).toBe(cu);
  });

  it.each([-1, 1.5, Number.NaN])('rejects %p attempts', (attempts) => {
    expect(() => cuForDeliveryAttempts(attempts)).toThrow(RangeError);
  });

  it('an attempt costs 25 CU', () => {
    expect(CU_PER_DELIVERY_ATTEMPT).toBe(25);
  });
});

describe('spendableCu (what an account can spend before it is exhausted)', () => {
  it.each([
    // allowance, purchased, spendable
    [20_000, 0, 20_000],
    [20_000, 5_000, 25_000],
    [0, 5_000, 5_000],
    // Purchased CU in debt take nothing from the allowance: the ledger spends the allowance
    // first and calls the account exhausted only when neither pool is above zero.
    [20_000, -500, 20_000],
    [0, -500, 0],
    [0, 0, 0],
  ])('allowance %i, purchased %i → %i', (allowance, purchased, spendable) => {
    expect(spendableCu(allowance, purchased)).toBe(spendable);
  });
});
