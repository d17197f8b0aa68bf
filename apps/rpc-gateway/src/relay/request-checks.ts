import { isWebSocketOnlyMethod, type Network } from '@meridian/networks';
import { JSONRPC_ERROR, type JsonRpcErrorObject, type RpcCall } from '@meridian/jsonrpc';
import { checkSuiParams } from './sui-params';

export type Transport = 'http' | 'websocket';

export interface CallCheckOptions {
  transport: Transport;
  /** Largest `toBlock - fromBlock` accepted for eth_getLogs when both are numbers. */
  maxLogsBlockRange: number;
}

/**
 * Everything the gateway can refuse without asking a node: the method must be in the network's
 * method table (and not WebSocket-only over HTTP), S params must have the spec's shape, and an
 * eth_getLogs range must stay under the cap. Returns null when the call may be relayed.
 */
export function checkCall(
  network: Network,
  call: RpcCall,
  options: CallCheckOptions,
): JsonRpcErrorObject | null {
  if (!network.methods.has(call.method)) {
    return {
      code: JSONRPC_ERROR.METHOD_NOT_FOUND,
      message: `the method ${call.method} does not exist/is not available on ${network.key}`,
    };
  }
  if (options.transport === 'http' && isWebSocketOnlyMethod(call.method)) {
    return {
      code: JSONRPC_ERROR.METHOD_NOT_FOUND,
      message: `the method ${call.method} is only available over WebSocket`,
    };
  }
  if (network.family === 'object-model') return checkSuiParams(call.method, call.params);
  if (call.method === 'eth_getLogs') return checkLogsRange(call.params, options.maxLogsBlockRange);
  return null;
}

function checkLogsRange(params: readonly unknown[], maxRange: number): JsonRpcErrorObject | null {
  const filter = params[0];
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    return {
      code: JSONRPC_ERROR.INVALID_PARAMS,
      message: 'invalid params: eth_getLogs takes one filter object',
    };
  }
  const { fromBlock, toBlock } = filter as { fromBlock?: unknown; toBlock?: unknown };
  const from = hexNumber(fromBlock);
  const to = hexNumber(toBlock);
  if (from !== undefined && to !== undefined && to - from > maxRange) {
    return {
      code: JSONRPC_ERROR.LIMIT_EXCEEDED,
      message: `limit exceeded: eth_getLogs block range ${to - from} is larger than ${maxRange} blocks`,
    };
  }
  return null;
}

function hexNumber(value: unknown): number | undefined {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)
    ? Number.parseInt(value, 16)
    : undefined;
}
