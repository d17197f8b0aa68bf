import {
  JSONRPC_ERROR,
  jsonRpcMessage,
  PARAMS_SHAPE,
  type JsonRpcErrorObject,
} from './jsonrpc-error';
import {
  paramsShapeIssue,
  scanRawMembers,
  scanRawMembersOfElements,
  type RawMembers,
} from './raw-json-scanner';

/** The raw JSON text `null`: the id of answers to requests whose id could not be read. */
export const NULL_ID = 'null';

/** A well-formed call. `idRaw` undefined = notification: run it, send no answer. */
export interface RpcCall {
  readonly valid: true;
  /** The id exactly as the client wrote it (JSON text), to be echoed unchanged. */
  readonly idRaw: string | undefined;
  readonly method: string;
  /** Parsed params, for validation; numbers beyond 2^53 here are lossy, `paramsRaw` is not. */
  readonly params: readonly unknown[];
  /** The params exactly as sent ("[]" when omitted), for relaying upstream unchanged. */
  readonly paramsRaw: string;
}

/** A request answered with an error without running it. `idRaw` undefined = no answer. */
export interface RpcInvalid {
  readonly valid: false;
  readonly idRaw: string | undefined;
  readonly error: JsonRpcErrorObject;
  /**
   * The method it names, when it names one (a non-empty string), whatever else is wrong with it
   * (its params, id or jsonrpc member): what an answer says of the method whatever the call's
   * fate (a `Deprecation` header) needs it.
   */
  readonly method?: string;
}

export type RpcRequestItem = RpcCall | RpcInvalid;

/**
 * `single`: the body was one request, or is answered by one error object (parse error, empty
 * batch, batch over the cap; `calls` then says how many calls the body held: 0, 0, the batch's
 * size; `methods`, for a batch over the cap, the distinct methods its elements name, as
 * `RpcInvalid.method` keeps a refused call's). `batch`: one item per element, in request order.
 */
export type ParsedRequest =
  | {
      readonly kind: 'single';
      readonly item: RpcRequestItem;
      readonly calls?: number;
      readonly methods?: ReadonlySet<string>;
    }
  | { readonly kind: 'batch'; readonly items: readonly RpcRequestItem[] };

/**
 * The methods a request names (a non-empty string `method`), whatever was wrong with its calls
 * or the batch as a whole (over the cap): what an answer says of the methods asked, whatever
 * their fate, is read here (the `Deprecation` header, ADR 0214).
 */
export function namesAnyOf(parsed: ParsedRequest, methods: ReadonlySet<string>): boolean {
  if (parsed.kind === 'batch') {
    for (const item of parsed.items)
      if (item.method !== undefined && methods.has(item.method)) return true;
    return false;
  }
  if (parsed.methods !== undefined) {
    for (const method of parsed.methods) if (methods.has(method)) return true;
    return false;
  }
  return parsed.item.method !== undefined && methods.has(parsed.item.method);
}

/** The distinct non-empty string methods named by the elements of a batch. */
function methodsNamed(elements: readonly unknown[]): Set<string> {
  const names = new Set<string>();
  for (const element of elements) {
    const method =
      element !== null && typeof element === 'object'
        ? (element as { method?: unknown }).method
        : undefined;
    if (typeof method === 'string' && method.length > 0) names.add(method);
  }
  return names;
}

/**
 * How many calls a request holds as parsed: a batch's elements (valid or not), 1 for one
 * object, 0 for a body that is not JSON or an empty batch, a batch's size when it is over the
 * cap. What the gateway's request log reports as `calls`, whatever was then answered or billed.
 * Not the WebSocket in-flight cap's count (rpc-gateway `callSlotsOf`): that one is taken from
 * the text before it is parsed and is at least 1, since every message holds its connection
 * until answered, an unparsable one too; this one says what the request held.
 */
export function callsAsParsed(parsed: ParsedRequest): number {
  return parsed.kind === 'batch' ? parsed.items.length : (parsed.calls ?? 1);
}

export interface ParseRequestOptions {
  /** Largest batch accepted; larger ones are answered by one -32005 error. */
  readonly maxBatchSize?: number;
}

const invalid = (
  idRaw: string | undefined,
  code: number,
  message: string,
  method?: string,
): RpcInvalid =>
  method === undefined
    ? { valid: false, idRaw, error: { code, message } }
    : { valid: false, idRaw, error: { code, message }, method };

const invalidRequest = (idRaw: string | undefined, detail: string, method?: string): RpcInvalid =>
  // Invalid requests are always answered, even without an id (JSON-RPC 2.0 §5 examples).
  invalid(
    idRaw ?? NULL_ID,
    JSONRPC_ERROR.INVALID_REQUEST,
    jsonRpcMessage(JSONRPC_ERROR.INVALID_REQUEST, detail),
    method,
  );

/**
 * How deep params may nest, the params array itself being level 1: far above any method's
 * (eth_call with a state override: 4), below the 128 levels of the whole request at which
 * serde-based nodes (anvil, reth) refuse a request under no id.
 */
export const MAX_PARAMS_DEPTH = 64;

/** What is wrong with params holding an object with a key twice (the key cut to 64 chars). */
export function duplicateKeyIssue(key: string): string {
  const shown = key.length <= 64 ? key : `${key.slice(0, 64)}…`;
  return `duplicate key ${JSON.stringify(shown)} in an object of params; each key may appear once`;
}

/** The cap check on its own, for transports that count batch elements themselves. */
export function batchSizeError(size: number, maxBatchSize: number): JsonRpcErrorObject | undefined {
  if (size <= maxBatchSize) return undefined;
  return {
    code: JSONRPC_ERROR.LIMIT_EXCEEDED,
    message: jsonRpcMessage(
      JSONRPC_ERROR.LIMIT_EXCEEDED,
      `batch of ${size} requests exceeds the limit of ${maxBatchSize}`,
    ),
    data: { limit: maxBatchSize, size },
  };
}

function toItem(value: unknown, raw: RawMembers | undefined): RpcRequestItem {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalidRequest(undefined, 'not an object');
  }
  const request = value as Record<string, unknown>;
  // The method is read first: a request refused for any other member still names it, for what an
  // answer says of the method whatever the call's fate (the `Deprecation` header, ADR 0214).
  const method = request.method;
  const named = typeof method === 'string' && method.length > 0 ? method : undefined;

  // JSON.parse never yields undefined, so undefined means the member is absent.
  const id = request.id;
  let idRaw: string | undefined;
  if (id === undefined) idRaw = undefined;
  else if (id === null) idRaw = NULL_ID;
  else if (typeof id === 'string' || typeof id === 'number') idRaw = raw?.id ?? JSON.stringify(id);
  else return invalidRequest(undefined, '"id" must be a string, a number or null', named);

  if (request.jsonrpc !== '2.0') return invalidRequest(idRaw, '"jsonrpc" must be "2.0"', named);
  if (named === undefined) return invalidRequest(idRaw, '"method" must be a non-empty string');

  const params = request.params;
  // null as omitted: go-ethereum and anvil take it (geth's older clients sent it), JSON-RPC 2.0
  // leaves `params` out rather than null, and no method reads a null as anything else.
  if (params === undefined || params === null)
    return { valid: true, idRaw, method: named, params: [], paramsRaw: '[]' };
  if (Array.isArray(params)) {
    const paramsRaw = raw?.params ?? JSON.stringify(params);
    // The checks read the parsed params (the last of duplicate keys), the node gets the raw text
    // (both): a duplicate is refused so that the node receives exactly what was checked; and
    // nesting a node would refuse under no id is refused here, in the call's own answer.
    const issue = paramsShapeIssue(paramsRaw, MAX_PARAMS_DEPTH);
    if (issue !== undefined)
      return invalid(
        idRaw,
        JSONRPC_ERROR.INVALID_PARAMS,
        jsonRpcMessage(
          JSONRPC_ERROR.INVALID_PARAMS,
          issue.kind === 'duplicate_key'
            ? duplicateKeyIssue(issue.key)
            : `params nested deeper than ${issue.maxDepth} levels`,
        ),
        named,
      );
    return { valid: true, idRaw, method: named, params, paramsRaw };
  }
  if (typeof params === 'object') {
    // By-name params are valid JSON-RPC 2.0 but no relayed method takes them: -32602, in the
    // words a scalar's -32600 has (PARAMS_SHAPE).
    return invalid(
      idRaw,
      JSONRPC_ERROR.INVALID_PARAMS,
      jsonRpcMessage(JSONRPC_ERROR.INVALID_PARAMS, PARAMS_SHAPE),
      named,
    );
  }
  return invalidRequest(idRaw, PARAMS_SHAPE, named);
}

/**
 * Parses a JSON-RPC 2.0 request body (single or batch). Never throws: every malformed input
 * becomes an item carrying the error to answer.
 */
export function parseRequest(text: string, options: ParseRequestOptions = {}): ParsedRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      kind: 'single',
      item: invalid(NULL_ID, JSONRPC_ERROR.PARSE_ERROR, jsonRpcMessage(JSONRPC_ERROR.PARSE_ERROR)),
      calls: 0,
    };
  }

  if (Array.isArray(value)) {
    if (value.length === 0)
      return { kind: 'single', item: invalidRequest(undefined, 'empty batch'), calls: 0 };
    if (options.maxBatchSize !== undefined) {
      const error = batchSizeError(value.length, options.maxBatchSize);
      if (error !== undefined)
        return {
          kind: 'single',
          item: { valid: false, idRaw: NULL_ID, error },
          calls: value.length,
          methods: methodsNamed(value),
        };
    }
    const raws = scanRawMembersOfElements(text);
    const items = new Array<RpcRequestItem>(value.length);
    for (let i = 0; i < value.length; i++) items[i] = toItem(value[i], raws[i]);
    return { kind: 'batch', items };
  }

  const isObject = value !== null && typeof value === 'object';
  return { kind: 'single', item: toItem(value, isObject ? scanRawMembers(text) : undefined) };
}

/** Whether an item gets an answer (everything except notifications). */
export function expectsResponse(item: RpcRequestItem): boolean {
  return item.idRaw !== undefined;
}
