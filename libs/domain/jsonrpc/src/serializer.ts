import type { JsonRpcErrorObject } from './jsonrpc-error';

/*
 * Answers are built by concatenation around raw JSON text: ids, results and params are never
 * re-encoded, so they reach the client exactly as they were written.
 */

export function serializeSuccess(idRaw: string, resultRaw: string): string {
  return '{"jsonrpc":"2.0","id":' + idRaw + ',"result":' + resultRaw + '}';
}

/** `data` is JSON-encoded and must be JSON-serializable; omitted when undefined. */
export function serializeError(
  idRaw: string,
  code: number,
  message: string,
  data?: unknown,
): string {
  const dataPart = data === undefined ? '' : ',"data":' + JSON.stringify(data);
  return (
    '{"jsonrpc":"2.0","id":' +
    idRaw +
    ',"error":{"code":' +
    code +
    ',"message":' +
    JSON.stringify(message) +
    dataPart +
    '}}'
  );
}

export function serializeErrorObject(idRaw: string, error: JsonRpcErrorObject): string {
  return serializeError(idRaw, error.code, error.message, error.data);
}

/** Relays an upstream error object verbatim (its data included) under the client's id. */
export function serializeErrorRaw(idRaw: string, errorRaw: string): string {
  return '{"jsonrpc":"2.0","id":' + idRaw + ',"error":' + errorRaw + '}';
}

/**
 * Joins the answers of a batch, in request order. Returns undefined when there is nothing to
 * send (a batch of notifications only): the transport then sends no body.
 */
export function serializeBatch(parts: readonly string[]): string | undefined {
  return parts.length === 0 ? undefined : '[' + parts.join(',') + ']';
}

/** A request to an upstream node, params relayed as the client sent them. */
export function serializeRequest(idRaw: string, method: string, paramsRaw = '[]'): string {
  return (
    '{"jsonrpc":"2.0","id":' +
    idRaw +
    ',"method":' +
    JSON.stringify(method) +
    ',"params":' +
    paramsRaw +
    '}'
  );
}
