import { NETWORKS } from '@meridian/networks';
import { jsonRpcErrorOf, parseRequest } from '@meridian/jsonrpc';
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
      message: 'not found: network polygon-amoy is not offered over JSON-RPC at this endpoint',
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
      'invalid params: params must be an array',
      'invalid request: not an object',
      'parse error',
      'limit exceeded: batch of 2 requests exceeds the limit of 1',
      'invalid params: x',
      'invalid request:',
    ]);
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
