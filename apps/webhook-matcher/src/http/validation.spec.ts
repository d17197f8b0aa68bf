import { isDomainError } from '@meridian/errors';
import { z } from 'zod';
import { checkId, newId } from './ids';
import { parseBody, parseQuery } from './validation';

const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (isDomainError(error))
      return {
        code: error.code,
        location: error.details?.['location'],
        path: error.details?.['path'],
        message: error.message,
      };
  }
  return null;
};

// The house form (platform-http parseRequestPart): `location`, and `path` with the part in front.
describe('strict bodies and queries', () => {
  const schema = z.strictObject({ name: z.string(), tags: z.array(z.number()).optional() });

  it('an unknown field is malformed_body naming the field', () => {
    expect(errorOf(() => parseBody(schema, { name: 'a', extra: 1 }))).toMatchObject({
      code: 'malformed_body',
      message: expect.stringContaining('"extra"'),
    });
  });

  it('a wrong type names its path', () => {
    expect(errorOf(() => parseBody(schema, { name: 'a', tags: [1, 'x'] }))).toMatchObject({
      code: 'malformed_body',
      location: 'body',
      path: 'body.tags[1]',
    });
    expect(errorOf(() => parseBody(schema, undefined))).toMatchObject({
      code: 'malformed_body',
      location: 'body',
      path: 'body',
    });
  });

  it('an unknown query parameter is named as a query parameter, not as the body', () => {
    const query = z.strictObject({ limit: z.coerce.number().optional() });
    expect(errorOf(() => parseQuery(query, { sort: 'x' }))).toEqual({
      code: 'invalid_query',
      location: 'query',
      path: 'query',
      message: 'query: unknown parameter "sort"',
    });
    expect(errorOf(() => parseBody(schema, { name: 'a', extra: 1 }))?.message).toBe(
      'body: unknown field "extra"',
    );
  });

  it('a parameter given twice is named as such, not as the number its array made (NaN)', () => {
    const query = z.strictObject({
      cursor: z.string().optional(),
      limit: z.coerce.number().optional(),
    });
    expect(errorOf(() => parseQuery(query, { limit: ['1', '2'] }))).toEqual({
      code: 'invalid_query',
      location: 'query',
      path: 'query.limit',
      message: 'query.limit: given more than once',
    });
    expect(errorOf(() => parseQuery(query, { cursor: ['1', '2'] }))?.message).toBe(
      'query.cursor: given more than once',
    );
    // An unknown parameter stays unknown, however often it is given.
    expect(errorOf(() => parseQuery(query, { x: ['1', '2'] }))?.message).toBe(
      'query: unknown parameter "x"',
    );
  });

  it('a JSON null body is named null, not undefined; no body stays "received undefined"', () => {
    expect(errorOf(() => parseBody(schema, null))).toEqual({
      code: 'malformed_body',
      location: 'body',
      path: 'body',
      message: 'body: the body must be a JSON object, received null',
    });
    expect(errorOf(() => parseBody(schema, undefined))?.message).toMatch(/received undefined$/);
  });

  it('a bad cursor is invalid_cursor, other bad parameters invalid_query', () => {
    const query = z.strictObject({
      cursor: z.string().regex(/^\d+$/).optional(),
      limit: z.coerce.number().max(5).optional(),
    });
    expect(errorOf(() => parseQuery(query, { cursor: 'x' }))?.code).toBe('invalid_cursor');
    expect(errorOf(() => parseQuery(query, { limit: '9' }))?.code).toBe('invalid_query');
  });
});

describe('ids', () => {
  it('new ids pass their own check; anything else is invalid_id', () => {
    expect(checkId('wh', newId('wh'))).toMatch(/^wh_[a-z2-7]{24}$/);
    expect(errorOf(() => checkId('wh', newId('al')))?.code).toBe('invalid_id');
    expect(errorOf(() => checkId('al', '../etc'))?.code).toBe('invalid_id');
  });
});
