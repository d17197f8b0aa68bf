import { JSONRPC_ERROR } from './jsonrpc-error';
import { parseRequest, type RpcRequestItem } from './request-parser';
import { parseResponse } from './response-parser';
import {
  serializeBatch,
  serializeError,
  serializeErrorObject,
  serializeErrorRaw,
  serializeRefusal,
  serializeRequest,
  serializeSuccess,
} from './serializer';

describe('serializers', () => {
  it.each([
    ['1', '"0x1"', '{"jsonrpc":"2.0","id":1,"result":"0x1"}'],
    ['12345678901234567890', '"0x1"', '{"jsonrpc":"2.0","id":12345678901234567890,"result":"0x1"}'],
    ['1.50', 'null', '{"jsonrpc":"2.0","id":1.50,"result":null}'],
    ['1e3', '{"a":[1,2]}', '{"jsonrpc":"2.0","id":1e3,"result":{"a":[1,2]}}'],
    ['"x\\u0041"', 'true', '{"jsonrpc":"2.0","id":"x\\u0041","result":true}'],
  ])('serializeSuccess(%s, %s)', (idRaw, resultRaw, expected) => {
    expect(serializeSuccess(idRaw, resultRaw)).toBe(expected);
    expect(() => JSON.parse(expected)).not.toThrow();
  });

  it.each([
    [
      'null',
      -32700,
      'Parse error',
      undefined,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    ],
    [
      '7',
      -32005,
      'block range "too" large',
      { limit: 10_000 },
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32005,"message":"block range \\"too\\" large","data":{"limit":10000}}}',
    ],
    [
      '"a"',
      -32000,
      'x',
      null,
      '{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"x","data":null}}',
    ],
  ])('serializeError(%s, %i, %p, %p)', (idRaw, code, message, data, expected) => {
    expect(serializeError(idRaw, code, message, data)).toBe(expected);
    expect(
      serializeErrorObject(idRaw, data === undefined ? { code, message } : { code, message, data }),
    ).toBe(expected);
  });

  it('relays an upstream error object verbatim', () => {
    const errorRaw = '{"code":3,"message":"execution reverted","data":"0x08c379a0"}';
    expect(serializeErrorRaw('99999999999999999999', errorRaw)).toBe(
      '{"jsonrpc":"2.0","id":99999999999999999999,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}',
    );
  });

  it.each([
    [[], undefined],
    [['{"a":1}'], '[{"a":1}]'],
    [['{"a":1}', '{"b":2}'], '[{"a":1},{"b":2}]'],
  ])('serializeBatch(%j)', (parts, expected) => {
    expect(serializeBatch(parts)).toBe(expected);
  });

  it.each([
    [
      '1',
      'eth_blockNumber',
      undefined,
      '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
    ],
    [
      '"u1"',
      'eth_call',
      '[{"to":"0x1"}, "latest"]',
      '{"jsonrpc":"2.0","id":"u1","method":"eth_call","params":[{"to":"0x1"}, "latest"]}',
    ],
  ])('serializeRequest(%s, %s, %p)', (idRaw, method, paramsRaw, expected) => {
    expect(serializeRequest(idRaw, method, paramsRaw)).toBe(expected);
  });
});

describe('round trip: client request → upstream → client answer', () => {
  const answer = (item: RpcRequestItem, upstreamBody: string): string | undefined => {
    if (item.idRaw === undefined) return undefined;
    if (!item.valid) return serializeErrorObject(item.idRaw, item.error);
    const upstream = parseResponse(upstreamBody);
    if (upstream.kind !== 'single')
      return serializeError(item.idRaw, JSONRPC_ERROR.INTERNAL_ERROR, 'Internal error');
    const response = upstream.item;
    if (response.kind === 'result') return serializeSuccess(item.idRaw, response.resultRaw);
    if (response.kind === 'error') return serializeErrorRaw(item.idRaw, response.errorRaw);
    return serializeError(item.idRaw, JSONRPC_ERROR.INTERNAL_ERROR, 'Internal error');
  };

  it('echoes every id exactly and keeps upstream numbers intact', () => {
    const body =
      '[{"jsonrpc":"2.0","id":12345678901234567890,"method":"a"},' +
      '{"jsonrpc":"2.0","id":1.50,"method":"b"},' +
      '{"jsonrpc":"2.0","id":1e3,"method":"c"},' +
      '{"jsonrpc":"2.0","method":"notify"},' +
      '{"jsonrpc":"2.0","id":"s","method":""}]';
    const parsed = parseRequest(body);
    if (parsed.kind !== 'batch') throw new Error('expected batch');
    const upstream = '{"jsonrpc":"2.0","id":0,"result":{"gas":98765432109876543210,"ratio":0.10}}';
    const out = serializeBatch(
      parsed.items
        .map((item) => answer(item, upstream))
        .filter((part): part is string => part !== undefined),
    );
    expect(out).toBe(
      '[{"jsonrpc":"2.0","id":12345678901234567890,"result":{"gas":98765432109876543210,"ratio":0.10}},' +
        '{"jsonrpc":"2.0","id":1.50,"result":{"gas":98765432109876543210,"ratio":0.10}},' +
        '{"jsonrpc":"2.0","id":1e3,"result":{"gas":98765432109876543210,"ratio":0.10}},' +
        '{"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"invalid request: \\"method\\" must be a non-empty string"}}]',
    );
    expect(() => JSON.parse(out!)).not.toThrow();
  });

  it('a batch of notifications answers with no body', () => {
    const parsed = parseRequest('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]');
    if (parsed.kind !== 'batch') throw new Error('expected batch');
    const parts = parsed.items.map((item) => answer(item, '{"jsonrpc":"2.0","id":1,"result":1}'));
    expect(
      serializeBatch(parts.filter((part): part is string => part !== undefined)),
    ).toBeUndefined();
  });

  describe('serializeRefusal: a request refused whole answers under its own ids', () => {
    const refusal = { code: -32041, message: 'unauthorized' };
    const refuse = (text: string) =>
      serializeRefusal(parseRequest(text, { maxBatchSize: 3 }), refusal);
    const error = ',"error":{"code":-32041,"message":"unauthorized"}}';

    it.each([
      ['a single call: its id, as written', '{"jsonrpc":"2.0","id":1.50,"method":"m"}', '1.50'],
      ['a single invalid request: its id', '{"jsonrpc":"1.0","id":"a"}', '"a"'],
      ['a notification: null', '{"jsonrpc":"2.0","method":"m"}', 'null'],
      ['not JSON: null', '{"jsonrpc":', 'null'],
      ['an empty batch: null', '[]', 'null'],
      ['a batch over the cap: null', '[1,2,3,4]', 'null'],
      ['a batch of notifications only: null', '[{"jsonrpc":"2.0","method":"m"}]', 'null'],
    ])('%s', (_what, text, idRaw) => {
      expect(refuse(text)).toBe('{"jsonrpc":"2.0","id":' + idRaw + error);
    });

    it('a batch: one error per element that expects an answer, in order, notifications left out', () => {
      expect(
        refuse(
          '[{"jsonrpc":"2.0","id":7,"method":"m"},{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","id":"x","method":"m"}]',
        ),
      ).toBe('[{"jsonrpc":"2.0","id":7' + error + ',{"jsonrpc":"2.0","id":"x"' + error + ']');
    });
  });
});
