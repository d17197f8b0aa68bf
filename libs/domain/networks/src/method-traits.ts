/**
 * Facts about methods that the gateway routes on. Kept beside the method tables so adding a
 * method forces a decision about its traits.
 */

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

export interface MethodTraits {
  readonly websocketOnly: boolean;
  readonly filter: boolean;
  readonly write: boolean;
  /** Read-only and stateless: the same call may be sent again to another upstream node. */
  readonly retrySafe: boolean;
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

export function methodTraits(method: string): MethodTraits {
  return {
    websocketOnly: isWebSocketOnlyMethod(method),
    filter: isFilterMethod(method),
    write: isWriteMethod(method),
    retrySafe: isRetrySafeMethod(method),
  };
}
