/**
 * The amount of CU typed in Top up and in the operator's Credit, read exactly or refused with a
 * message for under the field: nothing is stripped or guessed. `1e6`, `12.5`, `-5`, `2,500.75`
 * are refused, never read as 16, 125, 5 or 250075.
 *
 * Accepted: digits, optionally grouped in threes with commas as the page writes amounts
 * (`10,000,000`, formatCu's en-US grouping); spaces around the whole are ignored. A comma is
 * never a decimal separator here, and a period never groups: `2.500` (a thousands separator in
 * some locales, a decimal one in others) is refused, not read either way. The amount read is
 * shown under the field and in the confirmation before anything is sent.
 */

/** billing-ledger's bound for one top-up (`MAX_TOP_UP_CU`, its topUpBody; amount.spec.ts). */
export const MAX_TOP_UP_CU = 1_000_000_000_000;

export type AmountReading = { ok: true; cu: number } | { ok: false; message: string };

const GROUPED = /^\d{1,3}(,\d{3})+$/;

export function readCuAmount(text: string, max = MAX_TOP_UP_CU): AmountReading {
  const value = text.trim();
  if (value === '') return { ok: false, message: 'enter a number of compute units' };
  if (/^[-\u2212]/.test(value)) return { ok: false, message: 'must be a positive whole number' };
  if (/^\+/.test(value)) return { ok: false, message: 'write the number without a sign' };
  if (/^[\d,]*\d[eE][-+]?\d*$/.test(value))
    return { ok: false, message: 'write the number out in digits (no exponent such as 1e6)' };
  if (/^[\d,]*\.\d*$/.test(value) || /^[\d,]+\.[\d,.]*$/.test(value))
    return {
      ok: false,
      message: 'must be a whole number (no decimals; group thousands with commas: 10,000,000)',
    };
  if (!/^[\d,]+$/.test(value))
    return { ok: false, message: 'digits only (commas may group thousands: 10,000,000)' };
  if (value.includes(',') && !GROUPED.test(value))
    return {
      ok: false,
      message: 'group digits in threes with commas (10,000,000) or leave the commas out',
    };
  const digits = value.replace(/,/g, '').replace(/^0+(?=\d)/, '');
  // Compared as digits first: a number past 2^53 would not be read exactly.
  if (digits.length > String(max).length || Number(digits) > max)
    return { ok: false, message: `must be at most ${max.toLocaleString('en-US')}` };
  const cu = Number(digits);
  if (cu < 1) return { ok: false, message: 'must be at least 1' };
  return { ok: true, cu };
}
