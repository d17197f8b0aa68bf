import { E_METHODS, P_METHODS, R_METHODS } from './method.table';
import {
  isFilterMethod,
  isRetrySafeMethod,
  isWebSocketOnlyMethod,
  isWriteMethod,
  methodTraits,
} from './method-traits';

describe('method traits', () => {
  it.each([
    // method, websocketOnly, filter, write, retrySafe
    ['eth_subscribe', true, false, false, false],
    ['eth_unsubscribe', true, false, false, false],
    ['eth_newFilter', false, true, false, false],
    ['eth_newBlockFilter', false, true, false, false],
    ['eth_newPendingTransactionFilter', false, true, false, false],
    ['eth_getFilterChanges', false, true, false, false],
    ['eth_getFilterLogs', false, true, false, false],
    ['eth_uninstallFilter', false, true, false, false],
    ['eth_sendRawTransaction', false, false, true, false],
    ['eth_sendTransaction', false, false, true, false],
    ['debug_batchSendRawTransaction', false, false, true, false],
    ['eth_submitWork', false, false, true, false],
    ['eth_submitHashrate', false, false, true, false],
    ['eth_sign', false, false, true, false],
    ['eth_getLogs', false, false, false, true],
    ['eth_call', false, false, false, true],
    ['eth_blockNumber', false, false, false, true],
    ['debug_traceTransaction', false, false, false, true],
    ['sui_tryMultiGetPastObjects', false, false, false, true],
    ['suix_getLatestSuiSystemState', false, false, false, true],
  ] as const)(
    '%s: ws-only %p, filter %p, write %p, retry-safe %p',
    (method, websocketOnly, filter, write, retrySafe) => {
      expect(methodTraits(method)).toEqual({ websocketOnly, filter, write, retrySafe });
      expect(isWebSocketOnlyMethod(method)).toBe(websocketOnly);
      expect(isFilterMethod(method)).toBe(filter);
      expect(isWriteMethod(method)).toBe(write);
      expect(isRetrySafeMethod(method)).toBe(retrySafe);
    },
  );

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
