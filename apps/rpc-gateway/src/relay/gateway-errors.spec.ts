import { SpendEstimate } from '../credentials/spend-estimate';
import { DomainError } from '@meridian/errors';
import { NETWORKS } from '@meridian/networks';
import {
  JSONRPC_ERROR,
  jsonRpcErrorOf,
  jsonRpcMessageWordsOf,
  parseRequest,
  type JsonRpcErrorObject,
} from '@meridian/jsonrpc';
import * as contentCoding from './content-coding';
import * as gatewayErrors from './gateway-errors';
import * as logsRange from './logs-range';
import { checkSuiParams } from './sui-params';
import {
  balanceRefusal,
  bodyTooLarge,
  CU_EXHAUSTED,
  gatewayHttpStatusOf,
  invalidParams,
  methodNotAvailable,
  networkNotOffered,
  PLAN_REQUIRED,
  UNKNOWN_ACCESS_TOKEN,
} from './gateway-errors';
import { UNSUPPORTED_CONTENT_ENCODING } from './content-coding';

describe('gateway refusals on the JSON-RPC HTTP edge', () => {
  it('a network not offered here: 404 and -32000, told apart from a bad token (401, -32041)', () => {
    const notOffered = networkNotOffered(NETWORKS['polygon-amoy'], 'http');
    expect(gatewayHttpStatusOf(notOffered)).toBe(404);
    expect(jsonRpcErrorOf(notOffered)).toEqual({
      code: -32000,
      message: 'server error: network polygon-amoy is not offered over JSON-RPC at this endpoint',
    });
    expect(gatewayHttpStatusOf(UNKNOWN_ACCESS_TOKEN)).toBe(401);
    expect(jsonRpcErrorOf(UNKNOWN_ACCESS_TOKEN).code).toBe(-32041);
  });

  it('an unsupported Content-Encoding: 415 and -32600, code and message agreeing', () => {
    expect(gatewayHttpStatusOf(UNSUPPORTED_CONTENT_ENCODING)).toBe(415);
    const error = jsonRpcErrorOf(UNSUPPORTED_CONTENT_ENCODING);
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(/^invalid request: unsupported Content-Encoding/);
  });

  it('a body over the limit: 413 with a JSON-RPC error object (-32005)', () => {
    const error = bodyTooLarge(5 * 1024 * 1024);
    expect(gatewayHttpStatusOf(error)).toBe(413);
    expect(jsonRpcErrorOf(error)).toEqual({
      code: -32005,
      message: 'limit exceeded: the request body is larger than 5 MiB',
    });
    expect(bodyTooLarge(1000).message).toBe(
      'limit exceeded: the request body is larger than 1000 bytes',
    );
  });
});

describe('one style of message (QA: "Invalid params: …" beside "invalid params: …")', () => {
  it('a method name is written as is, dotted ones too; an implausible one is quoted', () => {
    const eth = NETWORKS['eth-mainnet'];
    expect(methodNotAvailable('rpc.discover', eth).message).toBe(
      'the method rpc.discover does not exist/is not available on eth-mainnet',
    );
    expect(methodNotAvailable('eth_foo', eth).message).toBe(
      'the method eth_foo does not exist/is not available on eth-mainnet',
    );
    expect(methodNotAvailable('eth foo"', eth).message).toBe(
      'the method "eth foo\\"" does not exist/is not available on eth-mainnet',
    );
  });

  it("every message starts lower case with its code's words, as the parser's answers do", () => {
    const parsed = parseRequest(
      '[{"jsonrpc":"1.0","id":1,"method":"m"},{"jsonrpc":"2.0","id":2,"method":"m","params":{}},7]',
    );
    const parserMessages =
      parsed.kind === 'batch' ? parsed.items.map((i) => !i.valid && i.error.message) : [];
    const notJson = parseRequest('{');
    const tooMany = parseRequest('[1,2]', { maxBatchSize: 1 });
    expect([
      ...parserMessages,
      notJson.kind === 'single' && !notJson.item.valid && notJson.item.error.message,
      tooMany.kind === 'single' && !tooMany.item.valid && tooMany.item.error.message,
      invalidParams('x').message,
      UNSUPPORTED_CONTENT_ENCODING.message.slice(0, 16),
    ]).toEqual([
      'invalid request: "jsonrpc" must be "2.0"',
      'invalid params: "params" must be an array, null or omitted',
      'invalid request: not an object',
      'parse error',
      'limit exceeded: batch of 2 requests exceeds the limit of 1',
      'invalid params: x',
      'invalid request:',
    ]);
  });
});

/**
 * Every refusal the gateway can answer, through each module that builds them: exported
 * DomainError constants are found by themselves; an exported function is either a builder with
 * sample calls here or listed as not one, so a new builder that is neither fails below.
 */
const eth = NETWORKS['eth-mainnet'];
const BUILDERS: Readonly<Record<string, () => readonly (DomainError | null | undefined)[]>> = {
  refusal: () => [
    gatewayErrors.refusal('x', 'not_found', 'x'),
    gatewayErrors.refusal('x', 'invalid', 'x', { details: { jsonRpcCode: -32600 } }),
  ],
  networkNotOffered: () =>
    (['http', 'websocket', 'grpc'] as const).map((where) =>
      gatewayErrors.networkNotOffered(NETWORKS['polygon-amoy'], where),
    ),
  rateLimited: () => [gatewayErrors.rateLimited(20, 50)],
  cuInsufficient: () => [gatewayErrors.cuInsufficient(2_000, 1_040)],
  methodNotAvailable: () => [gatewayErrors.methodNotAvailable('eth_foo', eth)],
  webSocketOnly: () => [gatewayErrors.webSocketOnly('eth_subscribe')],
  invalidParams: () => [gatewayErrors.invalidParams('x')],
  bodyTooLarge: () => [gatewayErrors.bodyTooLarge(1000)],
  limitExceeded: () => [gatewayErrors.limitExceeded('x')],
  answerTooLarge: () => [
    gatewayErrors.answerTooLarge(32 * 1024 * 1024),
    gatewayErrors.answerTooLarge(1000),
  ],
  answersBusy: () => [gatewayErrors.answersBusy(64 * 1024 * 1024)],
  planLimitExceeded: () => [gatewayErrors.planLimitExceeded('x')],
  decodedTooLarge: () => [contentCoding.decodedTooLarge(1000, 'gzip')],
  checkLogsRange: () => [
    logsRange.checkLogsRange('eth_getLogs', [], 10, 100),
    logsRange.checkLogsRange('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x64' }], 10, 100),
    logsRange.checkLogsRange('eth_getLogs', [{ fromBlock: '0x0' }], 10, undefined),
  ],
  checkGrowingFilterLogs: () => [logsRange.checkGrowingFilterLogs(0, 10, 1_000)],
};
/** Exported functions that build no refusal of their own (they pick or read one). */
const NOT_BUILDERS = new Set([
  'planRateLimitWords',
  'balanceRefusal',
  'unpaidRefusal',
  'gatewayHttpStatusOf',
  'retryAfterSecondsOf',
  'acceptsGzip',
  'gzipped',
  'decodeBody',
  'growingFloorOf',
]);
const MODULES = { gatewayErrors, contentCoding, logsRange };

function everyRefusal(): DomainError[] {
  const found: DomainError[] = [];
  for (const module of Object.values(MODULES))
    for (const value of Object.values(module)) if (value instanceof DomainError) found.push(value);
  for (const build of Object.values(BUILDERS))
    for (const error of build()) if (error instanceof DomainError) found.push(error);
  found.push(
    checkSuiParams('suix_getLatestSuiSystemState', [1])!,
    checkSuiParams('sui_tryMultiGetPastObjects', ['x'])!,
  );
  return found;
}

/** The parser's answers: every malformed shape it refuses. */
function everyParserError(): JsonRpcErrorObject[] {
  const bodies = [
    '{',
    '[]',
    '[1,2,3]',
    '7',
    '{"jsonrpc":"2.0","id":{},"method":"m"}',
    '{"jsonrpc":"1.0","id":1,"method":"m"}',
    '{"jsonrpc":"2.0","id":1,"method":""}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":5}',
    '{"jsonrpc":"2.0","id":1,"method":"m","params":{}}',
  ];
  return bodies.flatMap((body) => {
    const parsed = parseRequest(body, { maxBatchSize: 2 });
    const items = parsed.kind === 'single' ? [parsed.item] : parsed.items;
    return items.flatMap((item) => (item.valid ? [] : [item.error]));
  });
}

describe("every message starts with its code's words (QA after a5215bb)", () => {
  it('every exported function of the refusal modules is a builder sampled here, or not one', () => {
    const functions = Object.values(MODULES).flatMap((module) =>
      Object.entries(module)
        .filter(([, value]) => typeof value === 'function' && !(value instanceof DomainError))
        .map(([name]) => name),
    );
    expect(functions.filter((name) => !(name in BUILDERS) && !NOT_BUILDERS.has(name))).toEqual([]);
    // Each sampled builder made at least one refusal.
    for (const [name, build] of Object.entries(BUILDERS))
      expect([name, build().some((e) => e instanceof DomainError)]).toEqual([name, true]);
  });

  const answers = [
    ...everyRefusal().map((error) => ['gateway', error.code, jsonRpcErrorOf(error)] as const),
    ...everyParserError().map((error) => ['parser', String(error.code), error] as const),
  ];

  it.each(answers)('%s %s: %j', (_, __, { code, message }) => {
    if (code === JSONRPC_ERROR.METHOD_NOT_FOUND) {
      // The documented exception: go-ethereum's words (README "Where errors are made").
      expect(message).toMatch(/^the method \S+ (does not exist\/is not available on|is only)/);
      return;
    }
    if (message === 'filter not found') {
      // The node's own answer, word for word, for an id it does not know (README "Filters").
      expect(code).toBe(JSONRPC_ERROR.SERVER_ERROR);
      return;
    }
    const words = jsonRpcMessageWordsOf(code);
    expect(words).toBeDefined();
    expect(message === words || message.startsWith(`${words}: `)).toBe(true);
    expect(message).toBe(message.charAt(0).toLowerCase() + message.slice(1));
  });

  it('the shapes QA found: filter, network not offered, rate limit, params', () => {
    // The node's words (go-ethereum, anvil), so an unknown or foreign id answers as the node
    // does for a filter it dropped.
    expect(jsonRpcErrorOf(gatewayErrors.FILTER_NOT_FOUND)).toEqual({
      code: -32000,
      message: 'filter not found',
    });
    expect(jsonRpcErrorOf(gatewayErrors.rateLimited(20, 50))).toEqual({
      code: -32005,
      message: "limit exceeded: the plan's rate limit of 20 requests per second",
      // When to come back, on every interface: a WebSocket answer has no Retry-After header.
      data: { rps: 20, retryAfterMs: 50 },
    });
    const [scalar, object] = everyParserError().slice(-2);
    expect(scalar).toEqual({
      code: -32600,
      message: 'invalid request: "params" must be an array, null or omitted',
    });
    expect(object).toEqual({
      code: -32602,
      message: 'invalid params: "params" must be an array, null or omitted',
    });
  });
});

describe('the balance refusal names its cause', () => {
  const account = (status: 'ok' | 'exhausted', planRequired?: boolean) => ({
    accountId: 'a',
    status,
    nodeRps: 20,
    planRequired,
    version: 1,
  });

  it('an account that may spend is not refused, with a plan or without', () => {
    expect(balanceRefusal(undefined)).toBeUndefined();
    expect(balanceRefusal(account('ok'))).toBeUndefined();
    // A team without a plan that bought CU spends them (billing-ledger capsOf).
    expect(balanceRefusal(account('ok', true))).toBeUndefined();
  });

  it('an exhausted account with a plan: CU exhausted (402, -32040)', () => {
    expect(balanceRefusal(account('exhausted', false))).toBe(CU_EXHAUSTED);
    expect(balanceRefusal(account('exhausted'))).toBe(CU_EXHAUSTED);
    expect(jsonRpcErrorOf(CU_EXHAUSTED)).not.toHaveProperty('data');
  });

  it("an account whose state says ok is refused alike once this process's estimate is spent", () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 100);
    expect(balanceRefusal(account('ok'), estimate)).toBeUndefined();
    estimate.take(100);
    expect(balanceRefusal(account('ok'), estimate)).toBe(CU_EXHAUSTED);
    expect(balanceRefusal(account('ok', true), estimate)).toBe(PLAN_REQUIRED);
    // Without a state there is no estimate to spend.
    expect(balanceRefusal(undefined, new SpendEstimate())).toBeUndefined();
  });

  it('a request paid whole (gRPC) that needs more CU than are left, some left: says so, not "exhausted"', () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 1_040);
    // 100 calls of 20 CU: 2,000 CU; the estimate admits while above zero (the last may overdraw).
    const refusal = balanceRefusal(account('ok'), estimate, { cu: 2_000, lastCu: 20 });
    expect(refusal?.code).toBe('cu_insufficient');
    expect(gatewayHttpStatusOf(refusal!)).toBe(402);
    expect(jsonRpcErrorOf(refusal!)).toEqual({
      code: -32040,
      message:
        'payment required: this request needs 2000 compute units (CU) and the account has 1040 CU left; send fewer calls, top up or wait for the allowance reset',
    });
    expect(balanceRefusal(account('ok'), estimate, { cu: 1_040, lastCu: 20 })).toBeUndefined();
    expect(balanceRefusal(account('ok'), estimate, { cu: 1_060, lastCu: 20 })?.code).toBe(
      'cu_insufficient',
    );
    // Spent or exhausted: the cause is still the balance, as for any request.
    expect(balanceRefusal(account('exhausted'), estimate, { cu: 20, lastCu: 20 })).toBe(
      CU_EXHAUSTED,
    );
  });

  it('an account without a plan that cannot spend: plan_required, in data, not "exhausted"', () => {
    const refusal = balanceRefusal(account('exhausted', true));
    expect(refusal).toBe(PLAN_REQUIRED);
    expect(gatewayHttpStatusOf(PLAN_REQUIRED)).toBe(402);
    const error = jsonRpcErrorOf(PLAN_REQUIRED);
    expect(error).toEqual({
      code: -32040,
      message: expect.stringContaining('this account has no plan'),
      data: { code: 'plan_required' },
    });
    expect(error.message).not.toContain('exhausted');
  });
});
