/**
 * Every public REST API the fuzz suite and the authorization matrix cover, one line each: the
 * stack process that serves it. Its routes are not listed here: they come from the running
 * process itself (platform-http logs them at start), so a new route is fuzzed the day it lands.
 * Adding an API: one line here (its process must be one of tools/stack/layout.ts), plus its
 * routes' rows in authorization-matrix.ts, which fails until they exist.
 */
export const REST_APIS: readonly RestApi[] = [
  { process: 'billing-ledger' },
  { process: 'audit-api' },
  { process: 'webhook-matcher' },
  // Cookie sessions and X-CSRF-Token: the matrix's *_session rows, the fuzz's session cases.
  { process: 'dashboard' },
];

export interface RestApi {
  /** Process name in the stack layout (also the key of endpoints.json `apps`). */
  readonly process: string;
}

/** The other processes every fuzz run needs: the gateway (HTTP, WebSocket, gRPC) in front of anvil. */
export const GATEWAY_PROCESS = 'rpc-gateway-eu';
