import { isDomainError } from '@meridian/errors';
import { parseQuery } from '../http/validation';
import { entriesQuery, prefixRange } from './address-list.schemas';

const refusal = (query: Record<string, unknown>) => {
  try {
    parseQuery(entriesQuery, query);
  } catch (error) {
    if (isDomainError(error))
      return {
        code: error.code,
        location: error.details?.['location'],
        path: error.details?.['path'],
      };
  }
  return null;
};

describe('entries ?prefix=', () => {
  it.each([
    ['0xab', '0xab'],
    ['0xAB', '0xab'],
    ['0xAbC1', '0xabc1'],
    [`0x${'F'.repeat(40)}`, `0x${'f'.repeat(40)}`],
  ])('%s reads as %s (hex digits in any case)', (prefix, lower) => {
    expect(parseQuery(entriesQuery, { prefix })).toEqual({ limit: 50, prefix: lower });
  });

  it.each(['', '0x', 'ab', '0Xab', '0xg1', '0x 1', `0x${'a'.repeat(41)}`, '0x0x1'])(
    '%j is 400 invalid_prefix naming the parameter',
    (prefix) => {
      expect(refusal({ prefix })).toEqual({
        code: 'invalid_prefix',
        location: 'query',
        path: 'query.prefix',
      });
    },
  );

  it('pages with the cursor as the whole list does', () => {
    const cursor = `0xab${'0'.repeat(38)}`;
    expect(parseQuery(entriesQuery, { prefix: '0xAB', cursor, limit: '2' })).toEqual({
      limit: 2,
      prefix: '0xab',
      cursor,
    });
    expect(refusal({ prefix: '0xab', cursor: '0xab' })).toEqual({
      code: 'invalid_cursor',
      location: 'query',
      path: 'query.cursor',
    });
  });

  it('a prefix is the range of addresses from it padded with 0s to it padded with fs', () => {
    expect(prefixRange('0xab')).toEqual({
      first: `0xab${'0'.repeat(38)}`,
      last: `0xab${'f'.repeat(38)}`,
    });
    const whole = `0x${'12'.repeat(20)}`;
    expect(prefixRange(whole)).toEqual({ first: whole, last: whole });
  });
});
