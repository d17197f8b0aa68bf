import { checkAddresses, splitEntries } from './addresses';

/** Mixed case with its right EIP-55 checksum. */
const A = '0xabCDeF0123456789AbcdEf0123456789aBCDEF01';
/** A with one letter's case flipped: a wrong checksum, a typo the API refuses (ADR 0403). */
const A_TYPO = '0xAbCDeF0123456789AbcdEf0123456789aBCDEF01';
const B = '0x1111111111111111111111111111111111111111';

describe('splitEntries', () => {
  it('splits on lines, commas, semicolons and spaces', () => {
    expect(splitEntries(` ${A},${B};\n\n0x12  x `)).toEqual([A, B, '0x12', 'x']);
  });
});

describe('checkAddresses', () => {
  it.each([
    ['', { valid: [], invalid: [], duplicates: 0 }],
    [`${A}\n${B}`, { valid: [A.toLowerCase(), B], invalid: [], duplicates: 0 }],
    // The QA case: three entries, one of them not an address, count two.
    [`${A}\n0x1234\n${B}`, { valid: [A.toLowerCase(), B], invalid: ['0x1234'], duplicates: 0 }],
    [`${A} ${A.toLowerCase()}`, { valid: [A.toLowerCase()], invalid: [], duplicates: 1 }],
    [`${A}0`, { valid: [], invalid: [`${A}0`], duplicates: 0 }],
    [`${A_TYPO}\n${B}`, { valid: [B], invalid: [A_TYPO], duplicates: 0 }],
    [
      `${A.toLowerCase()} 0x${A.slice(2).toUpperCase()}`,
      { valid: [A.toLowerCase()], invalid: [], duplicates: 1 },
    ],
    [
      '1111111111111111111111111111111111111111',
      {
        valid: [],
        invalid: ['1111111111111111111111111111111111111111'],
        duplicates: 0,
      },
    ],
  ])('%j', (text, expected) => {
    expect(checkAddresses(text)).toEqual(expected);
  });
});
