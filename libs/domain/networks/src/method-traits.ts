/**
 * Facts about methods that the gateway routes on. Kept beside the method tables so adding a
 * method forces a decision about its traits.
 */

import type { Network } from './network.types';

/** Only meaningful on a persistent connection; over HTTP they answer -32601. */
export const WEBSOCKET_ONLY_METHODS: ReadonlySet<string> = new Set([
  'eth_subscribe',
  'eth_unsubscribe',
]);

/**
 * Polled filters live in one upstream node's memory: the gateway routes them sticky and must
 * not retry them elsewhere (the filter id would be unknown there).
 */
export const FILTER_METHODS: ReadonlySet<string> = new Set([
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_uninstallFilter',
]);

/** Methods that change state or spend keys; a blind retry could submit twice. */
export const WRITE_METHODS: ReadonlySet<string> = new Set([
  'eth_sendRawTransaction',
  'eth_sendTransaction',
  'debug_batchSendRawTransaction',
  'eth_submitWork',
  'eth_submitHashrate',
  'eth_sign',
]);

/**
 * Methods whose run time depends on what the caller asks for and may be long (executing
 * arbitrary code, scanning a block range, building proofs over many keys). The gateway never
 * puts them in a shared upstream batch: a batch is answered only when its slowest call is done,
 * so one of these would hold back every other caller's answer. Every `debug_*` and `trace_*`
 * method counts too (see {@link UNBOUNDED_METHOD_PREFIXES}).
 */
export const UNBOUNDED_METHODS: ReadonlySet<string> = new Set([
  'eth_call',
  'eth_estimateGas',
  'eth_createAccessList',
  'eth_getLogs',
  'eth_simulateV1',
  'eth_getProof',
]);

/** Tracing and debugging namespaces: re-executing blocks or transactions, unbounded by nature. */
export const UNBOUNDED_METHOD_PREFIXES: readonly string[] = ['debug_', 'trace_'];

export interface MethodTraits {
  readonly websocketOnly: boolean;
  readonly filter: boolean;
  readonly write: boolean;
  /** Read-only and stateless: the same call may be sent again to another upstream node. */
  readonly retrySafe: boolean;
  /** Its run time does not depend on caller input enough to hold back others in a batch. */
  readonly bounded: boolean;
}

export function isWebSocketOnlyMethod(method: string): boolean {
  return WEBSOCKET_ONLY_METHODS.has(method);
}

export function isFilterMethod(method: string): boolean {
  return FILTER_METHODS.has(method);
}

export function isWriteMethod(method: string): boolean {
  return WRITE_METHODS.has(method);
}

/** Subscriptions and filters hold per-node state, so they are not retry-safe even though they read. */
export function isRetrySafeMethod(method: string): boolean {
  return (
    !WRITE_METHODS.has(method) && !FILTER_METHODS.has(method) && !WEBSOCKET_ONLY_METHODS.has(method)
  );
}

/** False for {@link UNBOUNDED_METHODS} and every method in an unbounded namespace. */
export function isBoundedMethod(method: string): boolean {
  if (UNBOUNDED_METHODS.has(method)) return false;
  for (const prefix of UNBOUNDED_METHOD_PREFIXES) if (method.startsWith(prefix)) return false;
  return true;
}

/**
 * The one rule for upstream batching: may the gateway put this call in one upstream batch
 * together with other clients' calls? Only on EVM networks (whose nodes' JSON-RPC batch support
 * this relies on; network S keeps one exchange per client request), only for retry-safe methods
 * (a failed batch is retried whole on another node, which writes and filters must not be), and
 * only for bounded methods (a batch is as slow as its slowest call). See ADR 0205.
 */
export function mayCoalesce(network: Pick<Network, 'family'>, method: string): boolean {
  return network.family === 'evm' && isRetrySafeMethod(method) && isBoundedMethod(method);
}

export function methodTraits(method: string): MethodTraits {
  return {
    websocketOnly: isWebSocketOnlyMethod(method),
    filter: isFilterMethod(method),
    write: isWriteMethod(method),
    retrySafe: isRetrySafeMethod(method),
    bounded: isBoundedMethod(method),
  };
}
