import { parseResponse, type RpcResponseItem } from './response-parser';

const single = (text: string): RpcResponseItem => {
  const parsed = parseResponse(text);
  if (parsed.kind !== 'single') throw new Error(`expected single, got ${parsed.kind}`);
  return parsed.item;
};

describe('parseResponse', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"result":"0x1"}', '1', '"0x1"'],
    ['{"jsonrpc":"2.0","id":"a","result":null}', '"a"', 'null'],
    [
      '{"result":{"big":12345678901234567890,"f":1.50},"id":7,"jsonrpc":"2.0"}',
      '7',
      '{"big":12345678901234567890,"f":1.50}',
    ],
    [
      '{"jsonrpc":"2.0","id":12345678901234567890,"result":[ 1 , 2 ]}',
      '12345678901234567890',
      '[ 1 , 2 ]',
    ],
    ['{"id":3,"result":false}', '3', 'false'],
    ['{"jsonrpc":"2.0","id":null,"result":0}', 'null', '0'],
  ])('result %s', (text, idRaw, resultRaw) => {
    expect(single(text)).toEqual({ kind: 'result', idRaw, resultRaw });
  });

  it.each([
    [
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}',
      '1',
      -32000,
      'header not found',
      '{"code":-32000,"message":"header not found"}',
    ],
    [
      '{"jsonrpc":"2.0","id":"x","error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}',
      '"x"',
      3,
      'execution reverted',
      '{"code":3,"message":"execution reverted","data":"0x08c379a0"}',
    ],
    [
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
      'null',
      -32700,
      'Parse error',
      '{"code":-32700,"message":"Parse error"}',
    ],
  ])('error %s', (text, idRaw, code, message, errorRaw) => {
    expect(single(text)).toEqual({ kind: 'error', idRaw, code, message, errorRaw });
  });

  it.each([
    ['{"jsonrpc":"2.0","result":1}', undefined],
    ['{"jsonrpc":"2.0","id":{},"result":1}', undefined],
    ['{"jsonrpc":"2.0","id":true,"result":1}', undefined],
    ['{"jsonrpc":"1.0","id":1,"result":1}', '1'],
    ['{"jsonrpc":"2.0","id":1}', '1'],
    ['{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":null}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":"boom"}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":[]}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}', '1'],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":1}}', '1'],
  ])('malformed item %s', (text, idRaw) => {
    const item = single(text);
    expect(item.kind).toBe('malformed');
    expect(item.idRaw).toBe(idRaw);
  });

  it.each(['', 'not json', '<html>502 Bad Gateway</html>', '[]', '1', '"x"', 'null'])(
    'malformed body %p',
    (text) => {
      expect(parseResponse(text).kind).toBe('malformed');
    },
  );

  it('parses batches element by element', () => {
    const parsed = parseResponse(
      '[{"jsonrpc":"2.0","id":2,"result":"0x2"}, 5, {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}]',
    );
    expect(parsed.kind).toBe('batch');
    if (parsed.kind !== 'batch') return;
    expect(parsed.items.map((item) => [item.kind, item.idRaw])).toEqual([
      ['result', '2'],
      ['malformed', undefined],
      ['error', '1'],
    ]);
  });
});
