import { scanRawMembers, scanRawMembersOfElements, type RawMembers } from './raw-json-scanner';

/** An upstream success; `resultRaw` is relayed to the client unchanged. */
export interface RpcResultItem {
  readonly kind: 'result';
  readonly idRaw: string;
  readonly resultRaw: string;
}

/** An upstream error; `errorRaw` (the whole error object) may be relayed unchanged. */
export interface RpcErrorItem {
  readonly kind: 'error';
  readonly idRaw: string;
  readonly code: number;
  readonly message: string;
  readonly errorRaw: string;
}

/** An element that is not a JSON-RPC response; the gateway answers -32603 for it. */
export interface RpcMalformedItem {
  readonly kind: 'malformed';
  readonly idRaw: string | undefined;
  readonly reason: string;
}

export type RpcResponseItem = RpcResultItem | RpcErrorItem | RpcMalformedItem;

export type ParsedResponse =
  | { readonly kind: 'single'; readonly item: RpcResponseItem }
  | { readonly kind: 'batch'; readonly items: readonly RpcResponseItem[] }
  | { readonly kind: 'malformed'; readonly reason: string };

const malformed = (idRaw: string | undefined, reason: string): RpcMalformedItem => ({
  kind: 'malformed',
  idRaw,
  reason,
});

const has = (object: object, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(object, key);

function toItem(value: unknown, raw: RawMembers | undefined): RpcResponseItem {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || raw === undefined) {
    return malformed(undefined, 'not an object');
  }
  const response = value as Record<string, unknown>;
  const id = response.id;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number')
    return malformed(undefined, 'missing or invalid id');
  const idRaw = raw.id ?? 'null';
  // Lenient on a missing "jsonrpc" (it carries no information), strict on a wrong one.
  if (response.jsonrpc !== undefined && response.jsonrpc !== '2.0')
    return malformed(idRaw, '"jsonrpc" is not "2.0"');

  const hasResult = has(response, 'result');
  const hasError = has(response, 'error');
  if (hasResult === hasError) return malformed(idRaw, 'needs exactly one of result and error');
  if (hasResult) return { kind: 'result', idRaw, resultRaw: raw.result! };

  const error = response.error as Record<string, unknown> | null;
  if (error === null || typeof error !== 'object' || Array.isArray(error))
    return malformed(idRaw, 'error is not an object');
  if (typeof error.code !== 'number' || !Number.isInteger(error.code))
    return malformed(idRaw, 'error.code is not an integer');
  if (typeof error.message !== 'string') return malformed(idRaw, 'error.message is not a string');
  return { kind: 'error', idRaw, code: error.code, message: error.message, errorRaw: raw.error! };
}

/** Parses an upstream answer (single or batch). Never throws. */
export function parseResponse(text: string): ParsedResponse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'malformed', reason: 'not JSON' };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'malformed', reason: 'empty batch' };
    const raws = scanRawMembersOfElements(text);
    return { kind: 'batch', items: value.map((element, i) => toItem(element, raws[i])) };
  }
  if (value === null || typeof value !== 'object')
    return { kind: 'malformed', reason: 'not an object or array' };
  return { kind: 'single', item: toItem(value, scanRawMembers(text)) };
}
