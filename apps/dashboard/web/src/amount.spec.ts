import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_TOP_UP_CU, readCuAmount } from './amount';

/** billing-ledger's bound as its source declares it (an app is not imported by another). */
const billingMax = () => {
  const source = readFileSync(
    resolve(__dirname, '../../../billing-ledger/src/http/schemas.ts'),
    'utf8',
  );
  const declared = /export const MAX_TOP_UP_CU = ([\d_]+);/.exec(source);
  return Number(declared![1]!.replace(/_/g, ''));
};

const refused = (text: string) => {
  const reading = readCuAmount(text);
  if (reading.ok) throw new Error(`${text} was read as ${reading.cu}`);
  return reading.message;
};

describe('readCuAmount (Top up, the operator Credit)', () => {
  it('reads plain digits and en-US thousands grouping exactly', () => {
    expect(readCuAmount('1')).toEqual({ ok: true, cu: 1 });
    expect(readCuAmount('10000000')).toEqual({ ok: true, cu: 10_000_000 });
    expect(readCuAmount('10,000,000')).toEqual({ ok: true, cu: 10_000_000 });
    expect(readCuAmount(' 2,500 ')).toEqual({ ok: true, cu: 2_500 });
    expect(readCuAmount('007')).toEqual({ ok: true, cu: 7 });
    expect(readCuAmount('1,000,000,000,000')).toEqual({ ok: true, cu: MAX_TOP_UP_CU });
  });

  it('refuses what the old field silently rewrote (1e6 → 16, 12.5 → 125, -5 → 5, …)', () => {
    expect(refused('1e6')).toBe('write the number out in digits (no exponent such as 1e6)');
    expect(refused('1E+6')).toBe('write the number out in digits (no exponent such as 1e6)');
    expect(refused('12.5')).toMatch(/^must be a whole number/);
    expect(refused('-5')).toBe('must be a positive whole number');
    expect(refused('2,500.75')).toMatch(/^must be a whole number/);
    expect(refused('1e3')).toMatch(/no exponent/);
  });

  it('refuses ambiguous or malformed grouping instead of guessing', () => {
    expect(refused('2.500')).toMatch(/^must be a whole number/);
    expect(refused('25,00')).toBe(
      'group digits in threes with commas (10,000,000) or leave the commas out',
    );
    expect(refused('1,0000')).toMatch(/^group digits in threes/);
    expect(refused(',100')).toMatch(/^group digits in threes/);
    expect(refused('1 000')).toBe('digits only (commas may group thousands: 10,000,000)');
    expect(refused('10k')).toMatch(/^digits only/);
    expect(refused('+5')).toBe('write the number without a sign');
    expect(refused('')).toBe('enter a number of compute units');
    expect(refused('   ')).toBe('enter a number of compute units');
  });

  it("keeps to billing-ledger's bounds, in the words the API's refusals get", () => {
    expect(MAX_TOP_UP_CU).toBe(billingMax());
    expect(refused('0')).toBe('must be at least 1');
    expect(refused('1000000000001')).toBe('must be at most 1,000,000,000,000');
    // Past 2^53: compared as digits, not as a rounded float.
    expect(refused('99999999999999999999')).toBe('must be at most 1,000,000,000,000');
    expect(refused('9007199254740993')).toBe('must be at most 1,000,000,000,000');
  });
});
