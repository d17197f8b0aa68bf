import { checkEvmAddress } from '@meridian/networks';
import {
  addressChecker,
  checkAddresses,
  entriesChangeOutcome,
  mergeChecked,
  splitEntries,
} from './addresses';

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
    ['', { valid: [], invalid: [], wrongChecksum: [], duplicates: 0 }],
    [`${A}\n${B}`, { valid: [A.toLowerCase(), B], invalid: [], wrongChecksum: [], duplicates: 0 }],
    // The QA case: three entries, one of them not an address, count two.
    [
      `${A}\n0x1234\n${B}`,
      { valid: [A.toLowerCase(), B], invalid: ['0x1234'], wrongChecksum: [], duplicates: 0 },
    ],
    [
      `${A} ${A.toLowerCase()}`,
      { valid: [A.toLowerCase()], invalid: [], wrongChecksum: [], duplicates: 1 },
    ],
    [`${A}0`, { valid: [], invalid: [`${A}0`], wrongChecksum: [], duplicates: 0 }],
    [
      `${A_TYPO}\n${B}`,
      {
        valid: [B],
        invalid: [A_TYPO],
        wrongChecksum: [{ entry: A_TYPO, expected: A }],
        duplicates: 0,
      },
    ],
    [
      `${A.toLowerCase()} 0x${A.slice(2).toUpperCase()}`,
      { valid: [A.toLowerCase()], invalid: [], wrongChecksum: [], duplicates: 1 },
    ],
    [
      '1111111111111111111111111111111111111111',
      {
        valid: [],
        invalid: ['1111111111111111111111111111111111111111'],
        wrongChecksum: [],
        duplicates: 0,
      },
    ],
  ])('%j', (text, expected) => {
    expect(checkAddresses(text)).toEqual(expected);
  });
});

describe('addressChecker', () => {
  it('answers as checkAddresses does, box after box', () => {
    const check = addressChecker();
    for (const text of ['', `${A}\n0x1234\n${B}`, `${A_TYPO}\n${B}`, `${A} ${A.toLowerCase()}`, ''])
      expect(check(text)).toEqual(checkAddresses(text));
  });

  it('a keystroke checks again only the entry it changed (QA: 0.65 s a keystroke at 100k)', () => {
    const checked: string[] = [];
    const check = addressChecker((entry) => {
      checked.push(entry);
      return checkEvmAddress(entry);
    });
    // Mixed case needs the keccak checksum: those are the entries worth keeping.
    const box = [A, A_TYPO, '0x12'].join('\n');
    check(box);
    expect(checked).toEqual([A, A_TYPO, '0x12']);
    checked.length = 0;
    const typed = check(`${box}3`);
    expect(checked).toEqual(['0x123']);
    expect(typed).toEqual(checkAddresses(`${box}3`));
    // Lower case is checked without the cache at all; a repeat is not checked twice.
    checked.length = 0;
    check(`${B}\n${A}\n${A}\n0x123`);
    expect(checked).toEqual([]);
  });

  it("keeps only the last box's entries", () => {
    const checked: string[] = [];
    const check = addressChecker((entry) => {
      checked.push(entry);
      return checkEvmAddress(entry);
    });
    check(A);
    check(A_TYPO);
    check(A);
    expect(checked).toEqual([A, A_TYPO, A]);
  });
});

describe('mergeChecked', () => {
  it.each([
    ['', ''],
    [`${A}\n0x1234`, `${B}`],
    [`${A}\n${B}`, `${B} ${A.toLowerCase()} ${A_TYPO}`],
    [`${A_TYPO}\n0x1`, `0x1 ${A_TYPO} ${A}`],
    ['', `${A} ${A}`],
    [`${B} ${B}`, ''],
  ])('%j and %j read as their text joined by a line break', (first, second) => {
    expect(mergeChecked(checkAddresses(first), checkAddresses(second))).toEqual(
      checkAddresses(`${first}\n${second}`),
    );
  });
});

describe('entriesChangeOutcome', () => {
  it('says that a remove of addresses the list lacks changed nothing (QA: no feedback)', () => {
    expect(entriesChangeOutcome('remove', 1, { added: 0, removed: 0 })).toEqual({
      tone: 'warn',
      text: 'That address is not in this list: nothing was removed.',
    });
    expect(entriesChangeOutcome('remove', 3, { added: 0, removed: 0 }).text).toBe(
      'None of these 3 addresses is in this list: nothing was removed.',
    );
    expect(entriesChangeOutcome('remove', 3, { added: 0, removed: 2 })).toEqual({
      tone: 'ok',
      text: 'Removed 2 addresses. 1 address was not in the list.',
    });
  });

  it('says what an add and a replace did', () => {
    expect(entriesChangeOutcome('add', 2, { added: 2, removed: 0 }).text).toBe(
      'Added 2 addresses.',
    );
    expect(entriesChangeOutcome('add', 1, { added: 0, removed: 0 }).tone).toBe('warn');
    expect(entriesChangeOutcome('replace', 2, { added: 1, removed: 3 }).text).toBe(
      'The list now holds these 2 addresses: 1 added, 3 removed.',
    );
  });
});
