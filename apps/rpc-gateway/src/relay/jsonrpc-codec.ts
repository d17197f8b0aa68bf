/**
 * The gateway's vocabulary over @meridian/jsonrpc: codes of COMPAT "Node access" and the
 * string builders of answers (ids, params and results stay raw JSON text end to end).
 */
import {
  JSONRPC_ERROR,
  serializeBatch,
  serializeErrorObject,
  serializeSuccess,
  type JsonRpcErrorObject,
} from '@meridian/jsonrpc';

export type { RpcCall, RpcRequestItem } from '@meridian/jsonrpc';
export type RpcErrorObject = JsonRpcErrorObject;

export const PARSE_ERROR = JSONRPC_ERROR.PARSE_ERROR;
export const INVALID_REQUEST = JSONRPC_ERROR.INVALID_REQUEST;
export const METHOD_NOT_FOUND = JSONRPC_ERROR.METHOD_NOT_FOUND;
export const INVALID_PARAMS = JSONRPC_ERROR.INVALID_PARAMS;
export const INTERNAL_ERROR = JSONRPC_ERROR.INTERNAL_ERROR;
export const SERVER_ERROR = JSONRPC_ERROR.SERVER_ERROR;
export const LIMIT_EXCEEDED = JSONRPC_ERROR.LIMIT_EXCEEDED;
export const CU_EXHAUSTED = JSONRPC_ERROR.CU_EXHAUSTED;
export const UNAUTHORIZED = JSONRPC_ERROR.UNAUTHORIZED;

export const resultResponse = serializeSuccess;
export const errorResponse = serializeErrorObject;

export function batchResponse(items: readonly string[]): string {
  return serializeBatch(items) ?? '';
}
