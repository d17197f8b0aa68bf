import { checkEvmAddress, evmChecksumOf, isEvmAddress } from './evm-address';

// anvil's account 1, with its EIP-55 checksum.
const CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const LOWER = CHECKSUMMED.toLowerCase();
const UPPER = `0x${CHECKSUMMED.slice(2).toUpperCase()}`;
/** One letter's case flipped (…dc79C8 → …dC79C8: the README walkthrough's old typo). */
const FLIPPED = '0x70997970C51812dc3A010C7d01b50e0d17dC79C8';

describe('checkEvmAddress (ADR 0403)', () => {
  it.each([
    ['all lower case', LOWER],
    ['all upper case', UPPER],
    ['a valid EIP-55 checksum', CHECKSUMMED],
    ['digits only (no letters, no case)', '0x0000000000000000000000000000000000000001'],
  ])('accepts %s, lower case to store', (_, value) => {
    expect(checkEvmAddress(value)).toEqual({
      ok: true,
      lower: value.toLowerCase(),
    });
    expect(isEvmAddress(value)).toBe(true);
  });

  it('gives the EIP-55 form whatever the case given', () => {
    for (const value of [LOWER, UPPER, CHECKSUMMED]) expect(evmChecksumOf(value)).toBe(CHECKSUMMED);
  });

  it('refuses one flipped letter as a checksum error naming the checksummed form', () => {
    expect(checkEvmAddress(FLIPPED)).toEqual({
      ok: false,
      reason: 'checksum',
      expected: CHECKSUMMED,
    });
    expect(isEvmAddress(FLIPPED)).toBe(false);
  });

  it.each([
    ['too short', '0x1234'],
    ['too long', `${LOWER}0`],
    ['no 0x', LOWER.slice(2)],
    ['0X prefix', `0X${LOWER.slice(2)}`],
    ['a non-hex digit', `${LOWER.slice(0, -1)}g`],
    ['surrounding whitespace', ` ${LOWER}`],
    ['empty', ''],
  ])('refuses %s as a format error', (_, value) => {
    expect(checkEvmAddress(value)).toEqual({ ok: false, reason: 'format' });
  });

  it('refuses a value that is not a string as a format error', () => {
    expect(checkEvmAddress(42 as unknown as string)).toEqual({ ok: false, reason: 'format' });
  });
});
