import { paramsShapeIssue, scanRawMembers, scanRawMembersOfElements } from './raw-json-scanner';

const duplicateOf = (text: string) => {
  const issue = paramsShapeIssue(text, 1_000_000);
  return issue?.kind === 'duplicate_key' ? issue.key : undefined;
};

/** Small deterministic generator so the equivalence check covers many shapes reproducibly. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const strings = ['', 'a', '"', '\\', '\\"', '}', ']', '{"id":1}', 'é', '\n', '\u2028', '[', ','];
  const numbers = ['0', '-1', '1.50', '1e3', '12345678901234567890', '-0.0', '3.14E-2'];
  const ws = () => pick(['', ' ', '\n', '\t ', '\r\n']);
  const value = (depth: number): string => {
    const roll = next();
    if (depth > 3 || roll < 0.3) return pick(numbers);
    if (roll < 0.55) return JSON.stringify(pick(strings));
    if (roll < 0.6) return pick(['true', 'false', 'null']);
    if (roll < 0.8) {
      const n = Math.floor(next() * 4);
      return (
        '[' +
        ws() +
        Array.from({ length: n }, () => value(depth + 1)).join(ws() + ',' + ws()) +
        ws() +
        ']'
      );
    }
    return object(depth + 1, pick(['id', 'params', 'x', 'result', 'error', 'i"d']));
  };
  const object = (depth: number, ...keys: string[]): string =>
    '{' +
    ws() +
    keys.map((k) => JSON.stringify(k) + ws() + ':' + ws() + value(depth)).join(ws() + ',' + ws()) +
    ws() +
    '}';
  return { value, object, next };
}

describe('raw JSON scanner', () => {
  it.each(Array.from({ length: 300 }, (_, seed) => [seed]))(
    'agrees with JSON.parse on generated object %i',
    (seed) => {
      const gen = generator(seed + 1);
      const text = gen.object(0, 'a', 'id', 'params', 'b', 'result', 'error');
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const raw = scanRawMembers(text);
      for (const key of ['id', 'params', 'result', 'error'] as const) {
        expect(JSON.parse(raw[key]!)).toEqual(parsed[key]);
      }
    },
  );

  it.each(Array.from({ length: 100 }, (_, seed) => [seed]))(
    'agrees with JSON.parse on generated array %i',
    (seed) => {
      const gen = generator(seed + 1_000);
      const elements = Array.from({ length: 1 + Math.floor(gen.next() * 5) }, (_, i) =>
        i % 2 === 0 ? gen.object(0, 'params', 'id') : gen.value(0),
      );
      const text = '[' + elements.join(' ,\n') + ']';
      const parsed = JSON.parse(text) as unknown[];
      const raws = scanRawMembersOfElements(text);
      expect(raws).toHaveLength(parsed.length);
      raws.forEach((raw, i) => {
        const element = parsed[i];
        const isObject = element !== null && typeof element === 'object' && !Array.isArray(element);
        expect(raw !== undefined).toBe(isObject);
        if (raw?.id !== undefined)
          expect(JSON.parse(raw.id)).toEqual((element as Record<string, unknown>).id);
        if (raw?.params !== undefined)
          expect(JSON.parse(raw.params)).toEqual((element as Record<string, unknown>).params);
      });
    },
  );

  it.each([
    ['{}', {}],
    ['{ }', {}],
    ['{"id":1}', { id: '1' }],
    ['{"ID":1,"Id":2}', {}],
    ['{"id":"\\\\"}', { id: '"\\\\"' }],
    ['{"id":"\\\\\\""}', { id: '"\\\\\\""' }],
    ['{"idx":1,"xid":2,"id":3}', { id: '3' }],
    ['{"\\u0069\\u0064":1}', { id: '1' }],
    ['{"i\\"d":1}', {}],
    ['{"result":null,"id":null}', { result: 'null', id: 'null' }],
    [
      '{"error":{"code":-32000,"message":"x"},"id":"q"}',
      { error: '{"code":-32000,"message":"x"}', id: '"q"' },
    ],
  ])('scanRawMembers(%s)', (text, expected) => {
    expect(scanRawMembers(text)).toEqual(expected);
  });

  it.each([
    ['[]', []],
    ['[1,"x",null]', [undefined, undefined, undefined]],
    ['[{},{"id":2}]', [{}, { id: '2' }]],
    ['[[{"id":1}],{"id":2}]', [undefined, { id: '2' }]],
  ])('scanRawMembersOfElements(%s)', (text, expected) => {
    expect(scanRawMembersOfElements(text)).toEqual(expected);
  });

  it('returns nothing for non-container tops', () => {
    expect(scanRawMembers('[1]')).toEqual({});
    expect(scanRawMembersOfElements('{"id":1}')).toEqual([]);
  });
});

describe('paramsShapeIssue: a key twice in one object, as JSON.parse reads keys', () => {
  it.each([
    ['no object', '["0x1",true,[1,[2]],"{\\"a\\":1,\\"a\\":2}"]', undefined],
    ['distinct keys', '[{"a":1,"b":{"a":2}},{"a":3}]', undefined],
    ['same key in sibling objects', '[[{"objectId":"0x1"},{"objectId":"0x2"}]]', undefined],
    ['a value equal to a key', '[{"a":"a","b":"a"}]', undefined],
    ['Sui object ref', '[[{"objectId":"0xzz","objectId":"0x5","version":"1"}]]', 'objectId'],
    ['Sui options', '[[],{"showContent":"yes","showContent":true}]', 'showContent'],
    ['eth_call tx, nested deeper', '[{"to":"0x1","data":"0x","to":"0x2"},"latest"]', 'to'],
    ['after a closed inner object', '[{"a":{"b":1,"c":2},"d":[{"e":1}],"a":3}]', 'a'],
    ['an escaped spelling', '[{"showContent":true,"show\\u0043ontent":false}]', 'showContent'],
    ['spaces around the colon', '[{ "a" :1 , "a" : 2 }]', 'a'],
    ['a key holding quotes and braces', '[{"x\\"}{":1,"x\\"}{":2}]', 'x"}{'],
  ])('%s', (_case, text, expected) => {
    JSON.parse(text); // the precondition: text JSON.parse accepts
    expect(duplicateOf(text)).toBe(expected);
  });

  it('walks nesting as deep as the body allows without recursion', () => {
    const depth = 200_000;
    const text = `${'['.repeat(depth)}{"a":1,"a":2}${']'.repeat(depth)}`;
    expect(duplicateOf(text)).toBe('a');
  });
});

describe('paramsShapeIssue: nesting deeper than the limit', () => {
  const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

  it.each([
    ['arrays at the limit', nested(4), undefined],
    ['arrays one level over', nested(5), { kind: 'too_deep', maxDepth: 4 }],
    [
      'arrays over without an object (QA: 130 levels in an eth_call)',
      nested(130),
      { kind: 'too_deep', maxDepth: 4 },
    ],
    ['objects count as levels', '[{"a":{"b":{"c":{"d":1}}}}]', { kind: 'too_deep', maxDepth: 4 }],
    ['siblings do not add up', '[[[1]],[[2]],{"a":[3]}]', undefined],
    ['brackets inside strings are not levels', '[{"a":"[[[[[[{{{{{"}]', undefined],
    ['many brackets, shallow', '[[1],[2],[3],[4],[5],[6]]', undefined],
  ])('%s', (_case, text, expected) => {
    JSON.parse(text);
    expect(paramsShapeIssue(text, 4)).toEqual(expected);
  });
});
