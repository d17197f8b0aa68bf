import { matchesOfPage, readListSearch, SEARCH_WORDS } from './list-search';

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
    ['0xab', { prefix: '0xab', cursor: `0xaa${'f'.repeat(38)}`, whole: false }],
    ['AB', { prefix: '0xab', cursor: `0xaa${'f'.repeat(38)}`, whole: false }],
    [' 0XaB10 ', { prefix: '0xab10', cursor: `0xab0f${'f'.repeat(36)}`, whole: false }],
    // Nothing sorts below 0x00…0: the first page, from the start.
    ['0x0', { prefix: '0x0', cursor: undefined, whole: false }],
    ['0x1', { prefix: '0x1', cursor: `0x0${'f'.repeat(39)}`, whole: false }],
    [
      `0x${'ab'.repeat(20)}`,
      { prefix: `0x${'ab'.repeat(20)}`, cursor: `0x${'ab'.repeat(19)}aa`, whole: true },
    ],
    [
      `0x${'1'.padEnd(40, '0')}`,
      { prefix: `0x${'1'.padEnd(40, '0')}`, cursor: `0x0${'f'.repeat(39)}`, whole: true },
    ],
    // Mixed case is read as the address it spells (a search, not a checksum check).
    [
      '0xabCDeF0123456789AbcdEf0123456789aBCDEF01',
      {
        prefix: '0xabcdef0123456789abcdef0123456789abcdef01',
        cursor: '0xabcdef0123456789abcdef0123456789abcdef00',
        whole: true,
      },
    ],
  ])('%j reads as a prefix with the cursor just below it', (text, expected) => {
    expect(readListSearch(text as string)).toEqual({ ok: true, ...(expected as object) });
  });

  it.each(['0xg', 'xyz', '0x 12', `0x${'a'.repeat(41)}`, '0x0x12', '-1'])(
    '%j is refused in words',
    (text) => {
      expect(readListSearch(text)).toEqual({ ok: false, message: SEARCH_WORDS });
    },
  );

  it('a cursor below the prefix starts the page at the first address that can match', () => {
    // The route answers entries `> cursor` in address order: the cursor must sort below every
    // address starting with the prefix and above every address sorting below them.
    const search = readListSearch('0xab12');
    if (!search?.ok) throw new Error('read');
    const first = `0xab12${'0'.repeat(36)}`;
    const before = `0xab11${'f'.repeat(36)}`;
    expect(search.cursor! < first).toBe(true);
    expect(search.cursor! >= before).toBe(true);
  });
});

describe('matchesOfPage', () => {
  const a = (hex: string) => `0x${hex.padEnd(40, '0')}`;

  it('keeps the entries with the prefix; more follow only when the whole page matched', () => {
    expect(matchesOfPage([a('ab1'), a('ab2')], '0xab', 'cursor')).toEqual({
      matches: [a('ab1'), a('ab2')],
      more: true,
    });
    expect(matchesOfPage([a('ab1'), a('ac')], '0xab', 'cursor')).toEqual({
      matches: [a('ab1')],
      more: false,
    });
    expect(matchesOfPage([a('ab1')], '0xab', null)).toEqual({ matches: [a('ab1')], more: false });
    expect(matchesOfPage([a('ad')], '0xab', 'cursor')).toEqual({ matches: [], more: false });
    expect(matchesOfPage([], '0xab', null)).toEqual({ matches: [], more: false });
  });
});
