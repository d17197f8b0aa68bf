import { E_METHODS, P_METHODS, R_METHODS, S_METHODS } from './method.table';
import {
  isBoundedMethod,
  isFilterMethod,
  isRetrySafeMethod,
  isWebSocketOnlyMethod,
  isWriteMethod,
  mayCoalesce,
  methodTraits,
} from './method-traits';
import { NETWORKS } from './network.table';

describe('method traits', () => {
  it.each([
    // method, websocketOnly, filter, write, retrySafe, bounded
    ['eth_subscribe', true, false, false, false, true],
    ['eth_unsubscribe', true, false, false, false, true],
    ['eth_newFilter', false, true, false, false, true],
    ['eth_newBlockFilter', false, true, false, false, true],
    ['eth_newPendingTransactionFilter', false, true, false, false, true],
    ['eth_getFilterChanges', false, true, false, false, true],
    ['eth_getFilterLogs', false, true, false, false, true],
    ['eth_uninstallFilter', false, true, false, false, true],
    ['eth_sendRawTransaction', false, false, true, false, true],
    ['eth_sendTransaction', false, false, true, false, true],
    ['debug_batchSendRawTransaction', false, false, true, false, false],
    ['eth_submitWork', false, false, true, false, true],
    ['eth_submitHashrate', false, false, true, false, true],
    ['eth_sign', false, false, true, false, true],
    ['eth_getLogs', false, false, false, true, false],
    ['eth_call', false, false, false, true, false],
    ['eth_blockNumber', false, false, false, true, true],
    ['debug_traceTransaction', false, false, false, true, false],
    ['sui_tryMultiGetPastObjects', false, false, false, true, true],
    ['suix_getLatestSuiSystemState', false, false, false, true, true],
    ['eth_estimateGas', false, false, false, true, false],
    ['eth_createAccessList', false, false, false, true, false],
    ['eth_simulateV1', false, false, false, true, false],
    ['eth_getProof', false, false, false, true, false],
    ['trace_block', false, false, false, true, false],
    ['eth_getBalance', false, false, false, true, true],
    ['eth_getBlockByNumber', false, false, false, true, true],
  ] as const)(
    '%s: ws-only %p, filter %p, write %p, retry-safe %p, bounded %p',
    (method, websocketOnly, filter, write, retrySafe, bounded) => {
      expect(methodTraits(method)).toEqual({ websocketOnly, filter, write, retrySafe, bounded });
      expect(isWebSocketOnlyMethod(method)).toBe(websocketOnly);
      expect(isFilterMethod(method)).toBe(filter);
      expect(isWriteMethod(method)).toBe(write);
      expect(isRetrySafeMethod(method)).toBe(retrySafe);
      expect(isBoundedMethod(method)).toBe(bounded);
    },
  );

  describe('mayCoalesce', () => {
    it.each([
      // network, method, may coalesce
      ['eth-mainnet', 'eth_blockNumber', true],
      ['eth-mainnet', 'eth_getBalance', true],
      ['opbnb-mainnet', 'eth_getTransactionReceipt', true],
      ['polygon-mainnet', 'bor_getAuthor', true],
      ['eth-mainnet', 'eth_call', false],
      ['eth-mainnet', 'eth_getLogs', false],
      ['eth-mainnet', 'eth_getProof', false],
      ['polygon-mainnet', 'debug_traceTransaction', false],
      ['polygon-mainnet', 'trace_block', false],
      ['eth-mainnet', 'eth_sendRawTransaction', false],
      ['eth-mainnet', 'eth_newBlockFilter', false],
      ['eth-mainnet', 'eth_getFilterChanges', false],
      ['eth-mainnet', 'eth_subscribe', false],
      ['sui-mainnet', 'suix_getLatestSuiSystemState', false],
      ['sui-mainnet', 'sui_tryMultiGetPastObjects', false],
    ] as const)('%s %s: %p', (network, method, expected) => {
      expect(mayCoalesce(NETWORKS[network], method)).toBe(expected);
    });

    it('never on network S, whatever the method', () => {
      for (const method of S_METHODS)
        expect(mayCoalesce(NETWORKS['sui-mainnet'], method)).toBe(false);
    });
  });

  it('every trait names a method that some network table lists', () => {
    const listed = new Set([...R_METHODS, ...P_METHODS, ...E_METHODS]);
    for (const method of [
      'eth_subscribe',
      'eth_unsubscribe',
      'eth_newFilter',
      'eth_getFilterChanges',
      'eth_sendTransaction',
      'debug_batchSendRawTransaction',
      'eth_submitWork',
      'eth_submitHashrate',
      'eth_sign',
    ]) {
      expect(listed.has(method)).toBe(true);
    }
  });
});
