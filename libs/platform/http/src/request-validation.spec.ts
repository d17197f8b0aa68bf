import { isDomainError } from '@meridian/errors';
import { z } from 'zod';
import { parseBody, parseQuery, parseRequestPart, type RequestPart } from './request-validation';

const errorOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (isDomainError(error))
      return { code: error.code, message: error.message, details: error.details };
  }
  return null;
};

describe('request validation names where a problem is', () => {
  const query = z.strictObject({ limit: z.coerce.number().int().max(200).optional() });
  const body = z.strictObject({
    name: z.string(),
    accounts: z.array(z.strictObject({ plan: z.enum(['free']) })).optional(),
  });

  it('an unknown query parameter is in the query, not the body (QA report)', () => {
    expect(errorOf(() => parseQuery(query, { limit: '5', sort: 'name' }))).toEqual({
      code: 'invalid_query',
      message: 'query: unknown parameter "sort"',
      details: { location: 'query', path: 'query' },
    });
    expect(errorOf(() => parseQuery(query, { a: '1', b: '2' }))?.message).toBe(
      'query: unknown parameters "a", "b"',
    );
    expect(errorOf(() => parseQuery(query, { limit: '900' }))).toMatchObject({
      code: 'invalid_query',
      message: expect.stringMatching(/^query\.limit: /),
      details: { location: 'query', path: 'query.limit' },
    });
  });

  it('a parameter with a code of its own is refused with it, any other with invalid_query', () => {
    const paged = z.strictObject({
      cursor: z.string().regex(/^\d+$/).optional(),
      limit: z.coerce.number().int().max(200).optional(),
    });
    const codes = { cursor: 'invalid_cursor' };
    expect(errorOf(() => parseQuery(paged, { cursor: 'x' }, codes))).toEqual({
      code: 'invalid_cursor',
      message: expect.stringMatching(/^query\.cursor: /),
      details: { location: 'query', path: 'query.cursor' },
    });
    expect(errorOf(() => parseQuery(paged, { limit: '900' }, codes))?.code).toBe('invalid_query');
    // An unknown parameter is the whole query's.
    expect(errorOf(() => parseQuery(paged, { sort: 'a' }, codes))?.code).toBe('invalid_query');
    expect(errorOf(() => parseQuery(paged, { cursor: 'x' }))?.code).toBe('invalid_query');
  });

  it('body problems say body, with the path of nested fields', () => {
    expect(errorOf(() => parseBody(body, { name: 'a', extra: 1 }))).toMatchObject({
      code: 'malformed_body',
      message: 'body: unknown field "extra"',
    });
    expect(
      errorOf(() => parseBody(body, { name: 'a', accounts: [{ plan: 'free' }, { plan: 'x' }] })),
    ).toMatchObject({
      code: 'malformed_body',
      message: expect.stringMatching(/^body\.accounts\[1\]\.plan: /),
      details: { location: 'body', path: 'body.accounts[1].plan' },
    });
    expect(errorOf(() => parseBody(body, undefined))?.message).toMatch(/^body: /);
  });

  it.each([
    ['params', 'invalid_params', 'path parameter'],
    ['headers', 'invalid_headers', 'header'],
  ] as const)('%s: code %s, unknown keys called %s', (part: RequestPart, code, keyName) => {
    const schema = z.strictObject({ id: z.string().regex(/^acc_/) });
    expect(errorOf(() => parseRequestPart(part, schema, { id: 'x' }))).toMatchObject({
      code,
      message: expect.stringMatching(new RegExp(`^${part}\\.id: `)),
    });
    expect(errorOf(() => parseRequestPart(part, schema, { id: 'acc_1', other: '1' }))).toEqual({
      code,
      message: `${part}: unknown ${keyName} "other"`,
      details: { location: part, path: part },
    });
    expect(parseRequestPart(part, schema, { id: 'acc_1' })).toEqual({ id: 'acc_1' });
  });

  it("a parameter given twice and a null body are named as such, not in the schema's words (QA)", () => {
    expect(errorOf(() => parseQuery(query, { limit: ['1', '2'] }))).toEqual({
      code: 'invalid_query',
      message: 'query.limit: given more than once',
      details: { location: 'query', path: 'query.limit' },
    });
    // An unknown parameter given twice is still unknown.
    expect(errorOf(() => parseQuery(query, { sort: ['a', 'b'] }))?.message).toBe(
      'query: unknown parameter "sort"',
    );
    expect(errorOf(() => parseBody(body, null))?.message).toBe(
      'body: the body must be a JSON object, received null',
    );
  });

  it('a field left out is named required, with what it takes, not "received undefined" (QA)', () => {
    const create = z.strictObject({
      network: z.enum(['eth-mainnet', 'polygon-mainnet']),
      target_url: z.string(),
      nested: z.strictObject({ plan: z.enum(['free']) }).optional(),
    });
    expect(errorOf(() => parseBody(create, { network: 'eth-mainnet' }))).toEqual({
      code: 'malformed_body',
      message: 'body.target_url: required field missing (expected string)',
      details: { location: 'body', path: 'body.target_url' },
    });
    expect(errorOf(() => parseBody(create, { target_url: 'https://a.example' }))?.message).toBe(
      'body.network: required field missing (expected one of "eth-mainnet"|"polygon-mainnet")',
    );
    expect(
      errorOf(() => parseBody(create, { network: 'eth-mainnet', target_url: 'x', nested: {} }))
        ?.message,
    ).toBe('body.nested.plan: required field missing (expected "free")');
    // Given, but wrong: the schema's own words.
    expect(
      errorOf(() => parseBody(create, { network: 'eth-mainnet', target_url: 5 }))?.message,
    ).toBe('body.target_url: Invalid input: expected string, received number');
    expect(errorOf(() => parseQuery(query, {}))).toBeNull();
  });

  it('a caller may give the part its own code', () => {
    expect(errorOf(() => parseRequestPart('query', query, { x: 1 }, 'invalid_cursor'))?.code).toBe(
      'invalid_cursor',
    );
  });
});
