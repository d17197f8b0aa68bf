import type { DomainError } from '@meridian/errors';
import { isWebSocketOnlyMethod, type Network } from '@meridian/networks';
import type { RpcCall } from '@meridian/jsonrpc';
import { invalidParams, limitExceeded, methodNotAvailable, webSocketOnly } from './gateway-errors';
import { checkSuiParams } from './sui-params';

export type Transport = 'http' | 'websocket';

export interface CallCheckOptions {
  transport: Transport;
  /** Largest `toBlock - fromBlock` accepted for eth_getLogs when both are numbers. */
  maxLogsBlockRange: number;
}

const LOGS_FILTER_NOT_AN_OBJECT = invalidParams('eth_getLogs takes one filter object');

/**
 * Everything the gateway can refuse without asking a node: the method must be in the network's
 * method table (and not WebSocket-only over HTTP), S params must have the spec's shape, and an
 * eth_getLogs range must stay under the cap. Returns null when the call may be relayed.
 */
export function checkCall(
  network: Network,
  call: RpcCall,
  options: CallCheckOptions,
): DomainError | null {
  if (!network.methods.has(call.method)) return methodNotAvailable(call.method, network);
  if (options.transport === 'http' && isWebSocketOnlyMethod(call.method))
    return webSocketOnly(call.method);
  if (network.family === 'object-model') return checkSuiParams(call.method, call.params);
  if (call.method === 'eth_getLogs') return checkLogsRange(call.params, options.maxLogsBlockRange);
  return null;
}

function checkLogsRange(params: readonly unknown[], maxRange: number): DomainError | null {
  const filter = params[0];
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter))
    return LOGS_FILTER_NOT_AN_OBJECT;
  const { fromBlock, toBlock } = filter as { fromBlock?: unknown; toBlock?: unknown };
  const from = hexNumber(fromBlock);
  const to = hexNumber(toBlock);
  if (from === undefined || to === undefined) return null;
  const range = to - from;
  if (!(range > maxRange)) return null;
  // A range from a 400-digit number is no number to print ("Infinity").
  const size = Number.isSafeInteger(range) ? `${range} ` : '';
  return limitExceeded(`eth_getLogs block range ${size}is larger than ${maxRange} blocks`);
}

function hexNumber(value: unknown): number | undefined {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)
    ? Number.parseInt(value, 16)
    : undefined;
}
