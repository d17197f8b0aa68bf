import { entriesQuery, readListSearch, SEARCH_WORDS } from './list-search';

describe('readListSearch', () => {
  it.each([
    ['', undefined],
    ['   ', undefined],
    ['0x', undefined],
    ['0X', undefined],
  ])('%j asks nothing', (text, expected) => {
    expect(readListSearch(text)).toBe(expected);
  });

  it.each([
    ['0xab', { prefix: '0xab', whole: false }],
    ['AB', { prefix: '0xab', whole: false }],
    [' 0XaB10 ', { prefix: '0xab10', whole: false }],
    ['0x0', { prefix: '0x0', whole: false }],
    [`0x${'ab'.repeat(20)}`, { prefix: `0x${'ab'.repeat(20)}`, whole: true }],
    // Mixed case is read as the address it spells (a search, not a checksum check).
    [
      '0xabCDeF0123456789AbcdEf0123456789aBCDEF01',
      { prefix: '0xabcdef0123456789abcdef0123456789abcdef01', whole: true },
    ],
  ])('%j reads as a prefix', (text, expected) => {
    expect(readListSearch(text as string)).toEqual({ ok: true, ...(expected as object) });
  });

  it.each(['0xg', 'xyz', '0x 12', `0x${'a'.repeat(41)}`, '0x0x12', '-1'])(
    '%j is refused in words',
    (text) => {
      expect(readListSearch(text)).toEqual({ ok: false, message: SEARCH_WORDS });
    },
  );
});

describe('entriesQuery', () => {
  const cursor = `0xab${'0'.repeat(38)}`;

  it('a search asks the route for its prefix, not for a cursor read as an address', () => {
    // The old page asked `cursor=0xaaff…f` (the address just below 0xab) and no prefix.
    expect(entriesQuery(200, undefined, readListSearch('0xAB'))).toBe('limit=200&prefix=0xab');
    expect(entriesQuery(200, cursor, readListSearch('ab'))).toBe(
      `limit=200&cursor=${cursor}&prefix=0xab`,
    );
  });

  it('no search, or a refused one, reads the whole list', () => {
    expect(entriesQuery(200, undefined, undefined)).toBe('limit=200');
    expect(entriesQuery(200, cursor, undefined)).toBe(`limit=200&cursor=${cursor}`);
    expect(entriesQuery(200, undefined, readListSearch('0xzz'))).toBe('limit=200');
  });
});
