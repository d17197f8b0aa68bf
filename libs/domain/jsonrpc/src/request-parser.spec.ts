import { JSONRPC_ERROR } from './jsonrpc-error';
import {
  batchSizeError,
  callsAsParsed,
  MAX_PARAMS_DEPTH,
  expectsResponse,
  NULL_ID,
  parseRequest,
  type RpcCall,
  type RpcRequestItem,
} from './request-parser';

const single = (text: string): RpcRequestItem => {
  const parsed = parseRequest(text);
  if (parsed.kind !== 'single') throw new Error(`expected single, got ${parsed.kind}`);
  return parsed.item;
};

const call = (text: string): RpcCall => {
  const item = single(text);
  if (!item.valid) throw new Error(`expected a valid call, got ${JSON.stringify(item.error)}`);
  return item;
};

describe('parseRequest: ids are kept as raw text', () => {
  it.each([
    ['1', '1'],
    ['0', '0'],
    ['-7', '-7'],
    ['12345678901234567890', '12345678901234567890'],
    ['-12345678901234567890123', '-12345678901234567890123'],
    ['9007199254740993', '9007199254740993'],
    ['1.50', '1.50'],
    ['1e3', '1e3'],
    ['1E+3', '1E+3'],
    ['2.5e-7', '2.5e-7'],
    ['-0', '-0'],
    ['1.0', '1.0'],
    ['0.1000000000000000055511151231257827', '0.1000000000000000055511151231257827'],
    ['"abc"', '"abc"'],
    ['""', '""'],
    ['"a\\"b"', '"a\\"b"'],
    ['"\\u0041\\n"', '"\\u0041\\n"'],
    ['"é🙂"', '"é🙂"'],
    ['"12345678901234567890"', '"12345678901234567890"'],
    ['null', 'null'],
  ])('id %s → %s', (idText, expected) => {
    expect(call(`{"jsonrpc":"2.0","id":${idText},"method":"eth_chainId","params":[]}`).idRaw).toBe(
      expected,
    );
  });

  it.each([
    ['id first', '{"id":1.50,"jsonrpc":"2.0","method":"m"}'],
    ['id last', '{"jsonrpc":"2.0","method":"m","params":[1,{"id":2}],"id":1.50}'],
    ['whitespace around', '  {\n\t"jsonrpc" : "2.0" ,\r\n "id"\t:\n1.50 , "method":"m"}  \n'],
    [
      'nested ids ignored',
      '{"jsonrpc":"2.0","params":[{"id":7,"x":{"id":8}}],"method":"m","id":1.50}',
    ],
    [
      'strings that look like keys',
      '{"jsonrpc":"2.0","params":["\\"id\\":3","}]{["],"method":"m","id":1.50}',
    ],
    ['duplicate id: last wins like JSON.parse', '{"jsonrpc":"2.0","id":9,"method":"m","id":1.50}'],
    ['escaped key name', '{"jsonrpc":"2.0","\\u0069d":1.50,"method":"m"}'],
  ])('finds the id when %s', (_case, text) => {
    expect(call(text).idRaw).toBe('1.50');
  });

  it('absent id is a notification', () => {
    const item = call('{"jsonrpc":"2.0","method":"eth_blockNumber"}');
    expect(item.idRaw).toBeUndefined();
    expect(expectsResponse(item)).toBe(false);
  });
});

describe('parseRequest: params', () => {
  it.each([
    ['omitted', '{"jsonrpc":"2.0","id":1,"method":"m"}', [], '[]'],
    // As go-ethereum and anvil take it: no params (QA: it was -32600).
    ['null, as omitted', '{"jsonrpc":"2.0","id":1,"method":"m","params":null}', [], '[]'],
    ['empty', '{"jsonrpc":"2.0","id":1,"method":"m","params":[]}', [], '[]'],
    [
      'spaced',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[ "0x1" , true ]}',
      ['0x1', true],
      '[ "0x1" , true ]',
    ],
    [
      'big numbers kept raw',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[12345678901234567890,1.50]}',
      [Number('12345678901234567890'), 1.5],
      '[12345678901234567890,1.50]',
    ],
    [
      'nested objects',
      '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0xab","data":"0x"},"latest"]}',
      [{ to: '0xab', data: '0x' }, 'latest'],
      '[{"to":"0xab","data":"0x"},"latest"]',
    ],
    [
      'strings with brackets and escapes',
      '{"jsonrpc":"2.0","id":1,"method":"m","params":["]\\\\","[\\"x"]}',
      [']\\', '["x'],
      '["]\\\\","[\\"x"]',
    ],
  ])('%s', (_case, text, params, paramsRaw) => {
    const item = call(text);
    expect(item.params).toEqual(params);
    expect(item.paramsRaw).toBe(paramsRaw);
    expect(JSON.parse(item.paramsRaw)).toEqual(params);
  });
});

/**
 * QA: `sui_tryMultiGetPastObjects` with `{"objectId":"0xzz","objectId":"0x5",…}` passed the
 * params check (JSON.parse keeps the last) while the node got the raw text with both, and was
 * billed. A key twice in any object of params is -32602 at the parse, for every method.
 */
describe('parseRequest: a key twice in an object of params is -32602', () => {
  const message =
    'invalid params: duplicate key "objectId" in an object of params; each key may appear once';

  it('a single call: refused under its id, naming the method and the key', () => {
    const item = single(
      '{"jsonrpc":"2.0","id":7,"method":"sui_tryMultiGetPastObjects","params":[[{"objectId":"0xzz","objectId":"0x5","version":"1"}]]}',
    );
    expect(item).toEqual({
      valid: false,
      idRaw: '7',
      method: 'sui_tryMultiGetPastObjects',
      error: { code: JSONRPC_ERROR.INVALID_PARAMS, message },
    });
  });

  it('in a batch: that call alone; the same key in two objects is not a duplicate', () => {
    const parsed = parseRequest(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: '0x1' }, 'latest'] },
        { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ address: '0x1' }] },
      ]).replace('{"address":"0x1"}', '{"address":"0x1","address":"0x2"}'),
    );
    if (parsed.kind !== 'batch') throw new Error('expected a batch');
    expect(parsed.items[0]!.valid).toBe(true);
    expect(parsed.items[1]).toMatchObject({
      valid: false,
      idRaw: '2',
      error: {
        code: JSONRPC_ERROR.INVALID_PARAMS,
        message: message.replace('objectId', 'address'),
      },
    });
  });

  it("duplicates outside params are JSON.parse's business (the last wins, as before)", () => {
    const item = call('{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":[{"a":1}]}');
    expect(item.idRaw).toBe('2');
  });
});

/**
 * QA: an eth_call whose params nest 130 levels went to the node, which refused it under id null
 * (serde's 128 levels); the gateway took that for a node fault and three such calls opened every
 * node's breaker. Params deeper than MAX_PARAMS_DEPTH are -32602 under the call's own id.
 */
describe('parseRequest: params nested deeper than MAX_PARAMS_DEPTH are -32602', () => {
  const deep = (levels: number) =>
    `{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{"to":"0x1","x":${'['.repeat(levels)}1${']'.repeat(levels)}},"latest"]}`;

  it('refuses 130 levels (and one over the limit) under the id, naming the method', () => {
    for (const levels of [130, MAX_PARAMS_DEPTH - 1]) {
      expect(single(deep(levels))).toEqual({
        valid: false,
        idRaw: '3',
        method: 'eth_call',
        error: {
          code: JSONRPC_ERROR.INVALID_PARAMS,
          message: `invalid params: params nested deeper than ${MAX_PARAMS_DEPTH} levels`,
        },
      });
    }
  });

  it('takes params at the limit, relayed byte for byte', () => {
    const item = call(deep(MAX_PARAMS_DEPTH - 2));
    expect(item.paramsRaw.length).toBeGreaterThan(2 * (MAX_PARAMS_DEPTH - 2));
  });
});

describe('parseRequest: invalid single requests', () => {
  it.each([
    // body, code, idRaw of the answer
    ['', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['   ', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['{', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['{"jsonrpc":"2.0","id":1,"method":"m",}', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ["{'jsonrpc':'2.0'}", JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['{"jsonrpc":"2.0","id":01,"method":"m"}', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['{"jsonrpc":"2.0","id":NaN,"method":"m"}', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['[{"jsonrpc":"2.0","id":1,"method":"m"}', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['\uFEFF{"jsonrpc":"2.0","id":1,"method":"m"}', JSONRPC_ERROR.PARSE_ERROR, NULL_ID],
    ['[]', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    [' [ ] ', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['1', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['"x"', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['null', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['true', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['{}', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['{"id":1,"method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"1.0","id":1,"method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":2.0,"id":"a","method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, '"a"'],
    ['{"jsonrpc":"2.0","id":1}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","id":1,"method":""}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","id":1,"method":7}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","id":1,"method":null}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","method":1,"params":"bar"}', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":"bar"}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":5}', JSONRPC_ERROR.INVALID_REQUEST, '1'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['{"jsonrpc":"2.0","id":[1],"method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    ['{"jsonrpc":"2.0","id":true,"method":"m"}', JSONRPC_ERROR.INVALID_REQUEST, NULL_ID],
    [
      '{"jsonrpc":"2.0","id":1.50,"method":"m","params":{"a":1}}',
      JSONRPC_ERROR.INVALID_PARAMS,
      '1.50',
    ],
  ])('%p → %i (id %s)', (text, code, idRaw) => {
    const item = single(text);
    expect(item.valid).toBe(false);
    if (item.valid) return;
    expect(item.error.code).toBe(code);
    expect(item.idRaw).toBe(idRaw);
    expect(typeof item.error.message).toBe('string');
  });

  it('params null in a batch is no params, as alone', () => {
    const parsed = parseRequest(
      '[{"jsonrpc":"2.0","id":1,"method":"a","params":null},{"jsonrpc":"2.0","method":"b","params":null}]',
    );
    expect(parsed.kind === 'batch' && parsed.items).toEqual([
      { valid: true, idRaw: '1', method: 'a', params: [], paramsRaw: '[]' },
      { valid: true, idRaw: undefined, method: 'b', params: [], paramsRaw: '[]' },
    ]);
  });

  it('a request refused for its params still names its method; one without a method does not', () => {
    const byName = single('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}');
    const scalar = single('{"jsonrpc":"2.0","id":1,"method":"n","params":5}');
    const noMethod = single('{"jsonrpc":"2.0","id":1,"params":[]}');
    expect([byName, scalar, noMethod].map((item) => !item.valid && item.method)).toEqual([
      'm',
      'n',
      undefined,
    ]);
  });

  // QA: `"params":"x"` kept the method (its Deprecation header followed), `"jsonrpc":"1.0"` and
  // `"id":{}` lost it. Whatever else is wrong, a request with a method names it.
  it.each([
    ['"jsonrpc":"1.0"', '{"jsonrpc":"1.0","id":1,"method":"m"}'],
    ['no jsonrpc', '{"id":1,"method":"m"}'],
    ['"id":{}', '{"jsonrpc":"2.0","id":{},"method":"m"}'],
    ['"id":{} and "jsonrpc":1', '{"jsonrpc":1,"id":{},"method":"m","params":"x"}'],
  ])('refused for %s: still names its method', (_, text) => {
    const item = single(text);
    expect(item.valid === false && [item.error.code, item.method]).toEqual([
      JSONRPC_ERROR.INVALID_REQUEST,
      'm',
    ]);
  });

  it('"params" of the wrong shape: one wording under both of its codes', () => {
    const scalar = single('{"jsonrpc":"2.0","id":1,"method":"m","params":5}');
    const byName = single('{"jsonrpc":"2.0","id":1,"method":"m","params":{}}');
    expect([scalar, byName].map((item) => !item.valid && item.error)).toEqual([
      { code: -32600, message: 'invalid request: "params" must be an array, null or omitted' },
      { code: -32602, message: 'invalid params: "params" must be an array, null or omitted' },
    ]);
  });

  it('a notification with by-name params gets no answer', () => {
    const item = single('{"jsonrpc":"2.0","method":"m","params":{"a":1}}');
    expect(item.valid).toBe(false);
    expect(expectsResponse(item)).toBe(false);
  });

  it('an invalid request without an id is still answered', () => {
    expect(expectsResponse(single('{"method":"m"}'))).toBe(true);
  });

  it('ignores unknown members', () => {
    expect(call('{"jsonrpc":"2.0","id":1,"method":"m","extra":{"id":2}}').idRaw).toBe('1');
  });
});

describe('parseRequest: batches', () => {
  it('keeps request order and marks each item', () => {
    const parsed = parseRequest(
      '[{"jsonrpc":"2.0","id":12345678901234567890,"method":"a"},' +
        ' 1 ,' +
        '{"jsonrpc":"2.0","method":"notify"},' +
        '{"jsonrpc":"2.0","id":"x","method":""},' +
        '[],' +
        '{"jsonrpc":"2.0","id":1e3,"method":"b","params":[1.50]},' +
        'null]',
    );
    expect(parsed.kind).toBe('batch');
    if (parsed.kind !== 'batch') return;
    const summary = parsed.items.map((item) =>
      item.valid
        ? ['call', item.idRaw, item.method, item.paramsRaw]
        : ['error', item.idRaw, item.error.code],
    );
    expect(summary).toEqual([
      ['call', '12345678901234567890', 'a', '[]'],
      ['error', NULL_ID, JSONRPC_ERROR.INVALID_REQUEST],
      ['call', undefined, 'notify', '[]'],
      ['error', '"x"', JSONRPC_ERROR.INVALID_REQUEST],
      ['error', NULL_ID, JSONRPC_ERROR.INVALID_REQUEST],
      ['call', '1e3', 'b', '[1.50]'],
      ['error', NULL_ID, JSONRPC_ERROR.INVALID_REQUEST],
    ]);
  });

  it('a batch of one is still a batch', () => {
    expect(parseRequest('[{"jsonrpc":"2.0","id":1,"method":"m"}]').kind).toBe('batch');
  });

  it('a batch of notifications expects no answer', () => {
    const parsed = parseRequest('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]');
    expect(parsed.kind === 'batch' && parsed.items.some(expectsResponse)).toBe(false);
  });

  it.each([
    [3, 3, 'batch'],
    [4, 3, 'single'],
    [1000, 1000, 'batch'],
  ] as const)('%i requests with cap %i → %s', (size, cap, kind) => {
    const body = JSON.stringify(
      Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'm' })),
    );
    const parsed = parseRequest(body, { maxBatchSize: cap });
    expect(parsed.kind).toBe(kind);
    if (parsed.kind === 'single') {
      expect(parsed.item.valid).toBe(false);
      expect(!parsed.item.valid && parsed.item.error).toMatchObject({
        code: JSONRPC_ERROR.LIMIT_EXCEEDED,
        data: { limit: cap, size },
      });
      expect(parsed.item.idRaw).toBe(NULL_ID);
    }
  });

  it.each([
    [10, 10, undefined],
    [11, 10, JSONRPC_ERROR.LIMIT_EXCEEDED],
    [0, 0, undefined],
  ])('batchSizeError(%i, %i) → %p', (size, cap, code) => {
    expect(batchSizeError(size, cap)?.code).toBe(code);
  });

  it('ids of many items line up with their elements', () => {
    const ids = ['1', '"a"', 'null', '1.50', '99999999999999999999', '"}"', '-1e-3'];
    const body =
      '[' +
      ids
        .map((id, i) => `{"params":[{"id":${i}}],"id":${id},"jsonrpc":"2.0","method":"m${i}"}`)
        .join(' , ') +
      ']';
    const parsed = parseRequest(body);
    expect(parsed.kind === 'batch' && parsed.items.map((item) => item.idRaw)).toEqual(ids);
  });
});

describe("callsAsParsed: the calls a request holds as parsed (the request log's `calls`)", () => {
  it.each([
    ['one call', '{"jsonrpc":"2.0","id":1,"method":"m"}', 1],
    ['one invalid object', '{"jsonrpc":"1.0","id":1,"method":"m"}', 1],
    ['a batch of two, one invalid', '[{"jsonrpc":"2.0","id":1,"method":"m"},7]', 2],
    ['a body that is not JSON', '{', 0],
    ['an empty body', '', 0],
    ['an empty batch', '[]', 0],
    ['a batch over the cap', '[1,2,3]', 3],
  ])('%s: %i', (_what, text, calls) => {
    expect(callsAsParsed(parseRequest(text, { maxBatchSize: 2 }))).toBe(calls);
  });
});
