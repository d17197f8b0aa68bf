import type { DomainError } from '@meridian/errors';
import { isWebSocketOnlyMethod, type Network } from '@meridian/networks';
import type { RpcCall } from '@meridian/jsonrpc';
import { FILTER_ID_METHODS } from '../upstreams/filter-id';
import { invalidParams, methodNotAvailable, webSocketOnly } from './gateway-errors';
import { checkLogsRange, RANGED_LOG_METHODS } from './logs-range';
import { checkSuiParams } from './sui-params';

export type Transport = 'http' | 'websocket';

/**
 * A filter call whose params are not `[<filter id>]` (`[]`, `[123]`, an id and more): -32602,
 * unbilled, before any node or filter lookup, as go-ethereum answers ("missing value for
 * required argument 0", "too many arguments"). QA: they answered -32000 "filter not found",
 * the answer of a well-formed id that names no filter.
 */
const BAD_FILTER_ID_PARAMS: ReadonlyMap<string, DomainError> = new Map(
  [...FILTER_ID_METHODS].map((method) => [
    method,
    invalidParams(`${method} takes one filter id (a string)`),
  ]),
);

export interface CallCheckOptions {
  transport: Transport;
  /**
   * Most blocks an eth_getLogs query or an eth_newFilter filter may cover, both ends counted
   * (`toBlock - fromBlock + 1`, tags resolved against the head; logs-range.ts).
   */
  maxLogsBlockRange: number;
}

/**
 * Everything the gateway can refuse without asking a node: the method must be in the network's
 * method table (and not WebSocket-only over HTTP), S params must have the spec's shape, a filter
 * call must name one filter id, and the
 * block range of eth_getLogs and eth_newFilter must stay under the cap. Returns null when the call
 * may be relayed.
 * @param head the network's head height when known (what `latest` and an omitted end mean)
 */
export function checkCall(
  network: Network,
  call: RpcCall,
  options: CallCheckOptions,
  head: number | undefined,
): DomainError | null {
  if (!network.methods.has(call.method)) return methodNotAvailable(call.method, network);
  if (options.transport === 'http' && isWebSocketOnlyMethod(call.method))
    return webSocketOnly(call.method);
  if (network.family === 'object-model') return checkSuiParams(call.method, call.params);
  const badFilterId = BAD_FILTER_ID_PARAMS.get(call.method);
  if (badFilterId !== undefined)
    return call.params.length === 1 && typeof call.params[0] === 'string' ? null : badFilterId;
  if (RANGED_LOG_METHODS.has(call.method))
    return checkLogsRange(call.method, call.params, options.maxLogsBlockRange, head);
  return null;
}
