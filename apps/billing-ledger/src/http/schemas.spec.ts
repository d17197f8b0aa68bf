import { isDomainError } from '@meridian/errors';
import { usageWindowOf } from '../accounts/usage-window';
import { USAGE_BOUND_MAX, USAGE_BOUND_MIN, usageQuery } from './schemas';
import { parseQuery } from './validation';

const NOW = new Date('2026-11-29T08:14:05.123Z');

const refusal = (query: Record<string, string>) => {
  try {
    parseQuery(usageQuery, query);
  } catch (error) {
    if (isDomainError(error))
      return { code: error.code, path: (error.details as { path?: string }).path };
  }
  return undefined;
};

describe('usageQuery: the bounds a usage read may name', () => {
  it.each([
    [{ to: '9999-12-31T23:59:59Z' }, 'query.to'],
    [{ from: '0000-01-01T00:00:00Z', to: '0000-02-01T00:00:00Z' }, 'query.from'],
    [{ from: '1969-12-31T23:59:59Z' }, 'query.from'],
    [{ to: '9999-12-31T23:00:00-00:01' }, 'query.to'],
  ])('%j: 400 invalid_query naming %s (QA: Postgres refused it, a 500)', (query, path) => {
    expect(refusal(query)).toEqual({ code: 'invalid_query', path });
  });

  it('accepts both ends, and the latest stays in year 9999 once snapped', () => {
    const window = usageWindowOf(
      parseQuery(usageQuery, { from: '9999-06-01T00:00:00Z', to: USAGE_BOUND_MAX }),
      NOW,
    );
    expect(window.to.toISOString()).toBe('9999-12-31T23:00:00.000Z');
    const earliest = usageWindowOf(
      parseQuery(usageQuery, { from: USAGE_BOUND_MIN, to: '1970-01-02T00:00:00Z' }),
      NOW,
    );
    expect(earliest.from.toISOString()).toBe('1970-01-01T00:00:00.000Z');
  });
});
