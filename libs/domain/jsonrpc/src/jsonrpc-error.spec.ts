import { DomainError } from '@meridian/errors';
import {
  nodeLacksMethod,
  jsonRpcErrorOf,
  JSONRPC_CODE_OF_KIND,
  JSONRPC_ERROR,
  JSONRPC_ERROR_MESSAGE,
  jsonRpcMessage,
  jsonRpcMessageWordsOf,
} from './jsonrpc-error';

describe('JSON-RPC error codes (COMPAT)', () => {
  it.each([
    ['PARSE_ERROR', -32700],
    ['INVALID_REQUEST', -32600],
    ['METHOD_NOT_FOUND', -32601],
    ['INVALID_PARAMS', -32602],
    ['INTERNAL_ERROR', -32603],
    ['SERVER_ERROR', -32000],
    ['LIMIT_EXCEEDED', -32005],
    ['CU_EXHAUSTED', -32040],
    ['UNAUTHORIZED', -32041],
  ] as const)('%s = %i', (name, code) => {
    expect(JSONRPC_ERROR[name]).toBe(code);
    expect(JSONRPC_ERROR_MESSAGE[name].length).toBeGreaterThan(0);
  });

  it('our own codes stay in the server-error range', () => {
    for (const code of [
      JSONRPC_ERROR.CU_EXHAUSTED,
      JSONRPC_ERROR.UNAUTHORIZED,
      JSONRPC_ERROR.LIMIT_EXCEEDED,
    ]) {
      expect(code).toBeGreaterThanOrEqual(-32099);
      expect(code).toBeLessThanOrEqual(-32000);
    }
  });

  it.each([
    ['invalid', -32602],
    ['payment_required', -32040],
    ['rate_limited', -32005],
    ['too_large', -32005],
    ['unavailable', -32000],
    ['internal', -32603],
    ['not_found', -32000],
    ['unimplemented', -32601],
    ['conflict', -32005],
    ['precondition_failed', -32000],
    ['unauthenticated', -32041],
    ['forbidden', -32041],
  ] as const)('kind %s → %i', (kind, code) => {
    expect(JSONRPC_CODE_OF_KIND[kind]).toBe(code);
    expect(jsonRpcErrorOf(new DomainError('x', kind, 'safe message'))).toEqual({
      code,
      message: 'safe message',
    });
  });

  it("details.jsonRpcCode replaces the kind's code (an invalid request, not invalid params)", () => {
    const error = new DomainError('x', 'invalid', 'invalid request: y', {
      details: { jsonRpcCode: JSONRPC_ERROR.INVALID_REQUEST },
    });
    expect(jsonRpcErrorOf(error)).toEqual({ code: -32600, message: 'invalid request: y' });
  });
});

describe('jsonRpcMessage: the one builder of a message in the house style', () => {
  it("takes the code's words, then what is wrong; the words alone when nothing is added", () => {
    expect(jsonRpcMessage(JSONRPC_ERROR.SERVER_ERROR, 'filter not found')).toBe(
      'server error: filter not found',
    );
    expect(jsonRpcMessage(JSONRPC_ERROR.PARSE_ERROR)).toBe('parse error');
    for (const key of Object.keys(JSONRPC_ERROR) as (keyof typeof JSONRPC_ERROR)[])
      expect(jsonRpcMessageWordsOf(JSONRPC_ERROR[key])).toBe(JSONRPC_ERROR_MESSAGE[key]);
  });

  it('refuses a code without words (a node error is relayed as the node wrote it)', () => {
    expect(jsonRpcMessageWordsOf(-32099)).toBeUndefined();
    expect(() => jsonRpcMessage(-32099, 'x')).toThrow(/-32099/);
  });
});

describe('nodeLacksMethod: a node saying it does not implement the method asked', () => {
  it.each([
    [-32601, 'the method eth_getWork does not exist/is not available', true],
    [-32601, 'Method not found', true],
    [-32004, 'Method not supported', true],
    // anvil 1.x answers eth_getWork so (QA: it was billed 20 CU).
    [-32603, 'Not implemented', true],
    [-32000, 'not supported', true],
    [-32000, 'method not supported.', true],
    [-32603, 'the method eth_getWork is not supported', true],
    [-32000, 'unsupported method: eth_getWork', true],
    [-32000, 'transaction type not supported', false],
    [-32603, 'internal error: not implemented for pending blocks yet, try latest', false],
    [3, 'execution reverted', false],
    [-32602, 'invalid length 0, expected tuple variant EthRequest::EthSubmitWork', false],
    [-32000, 'header not found', false],
  ])('%d %s: %s', (code, message, lacks) => {
    expect(nodeLacksMethod({ code, message })).toBe(lacks);
  });
});
