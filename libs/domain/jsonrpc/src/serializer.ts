import type { JsonRpcErrorObject } from './jsonrpc-error';
import { NULL_ID, type ParsedRequest } from './request-parser';

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

/**
 * The answer to a request refused whole before any of its calls ran (its credential, balance or
 * rate), under the ids the request carried: JSON-RPC 2.0 answers each request of a batch on its
 * own, so a batch gets an array with the error once per element that expects an answer, each
 * under its own id, in request order. The id is null only where none could be read (§5): a
 * body that is not JSON, an empty batch or one over the cap (the parser answers those with one
 * item), and a notification or a batch of notifications only, which still get one error object
 * with id null (an HTTP refusal needs a body; a WebSocket client is told why nothing ran).
 */
export function serializeRefusal(request: ParsedRequest, error: JsonRpcErrorObject): string {
  if (request.kind === 'single') return serializeErrorObject(request.item.idRaw ?? NULL_ID, error);
  const parts: string[] = [];
  for (const item of request.items)
    if (item.idRaw !== undefined) parts.push(serializeErrorObject(item.idRaw, error));
  return serializeBatch(parts) ?? serializeErrorObject(NULL_ID, error);
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
