import {
  allowanceResetPostings,
  applyCharge,
  assertBalanced,
  isExhausted,
  nextExhaustedSince,
  splitCharge,
  usagePostings,
} from './ledger-math';

describe('splitCharge', () => {
  it.each([
    // allowance, purchased, cu → fromAllowance, fromPurchased, overdraft
    [1_000, 500, 300, 300, 0, 0],
    [1_000, 500, 1_000, 1_000, 0, 0],
    [1_000, 500, 1_200, 1_000, 200, 0],
    [0, 500, 500, 0, 500, 0],
    [100, 50, 200, 100, 100, 50],
    [0, 0, 40, 0, 40, 40],
    [0, -40, 20, 0, 20, 20],
    [0, 0, 0, 0, 0, 0],
  ])(
    'allowance %i purchased %i, charge %i → %i from allowance, %i purchased, %i overdraft',
    (allowance, purchased, cu, a, p, o) => {
      expect(splitCharge({ allowance, purchased }, cu)).toEqual({
        fromAllowance: a,
        fromPurchased: p,
        overdraft: o,
      });
    },
  );

  it('never lets the allowance go below zero; only purchased carries the debt', () => {
    const after = applyCharge(
      { allowance: 10, purchased: 0 },
      splitCharge({ allowance: 10, purchased: 0 }, 35),
    );
    expect(after).toEqual({ allowance: 0, purchased: -25 });
  });

  it('refuses negative or fractional charges', () => {
    expect(() => splitCharge({ allowance: 1, purchased: 1 }, -1)).toThrow(RangeError);
    expect(() => splitCharge({ allowance: 1, purchased: 1 }, 1.5)).toThrow(RangeError);
  });
});

describe('exhaustion', () => {
  const now = new Date('2026-01-02T00:00:00Z');
  const before = new Date('2026-01-01T00:00:00Z');
  it('is exhausted only when both pools are empty', () => {
    expect(isExhausted({ allowance: 0, purchased: 0 })).toBe(true);
    expect(isExhausted({ allowance: 0, purchased: -5 })).toBe(true);
    expect(isExhausted({ allowance: 1, purchased: -5 })).toBe(false);
    expect(isExhausted({ allowance: 0, purchased: 1 })).toBe(false);
  });
  it('keeps the first moment of exhaustion and clears it when CU return', () => {
    expect(nextExhaustedSince({ allowance: 0, purchased: 0 }, null, now)).toEqual(now);
    expect(nextExhaustedSince({ allowance: 0, purchased: 0 }, before, now)).toEqual(before);
    expect(nextExhaustedSince({ allowance: 10, purchased: 0 }, before, now)).toBeNull();
  });
});

describe('postings', () => {
  it('balances usage and allowance resets', () => {
    const usage = usagePostings({ fromAllowance: 70, fromPurchased: 30, overdraft: 0 });
    expect(usage).toEqual([
      { ledger: 'allowance', amount: -70 },
      { ledger: 'usage', amount: 70 },
      { ledger: 'purchased', amount: -30 },
      { ledger: 'usage', amount: 30 },
    ]);
    expect(() => assertBalanced(usage)).not.toThrow();
    const reset = allowanceResetPostings(1_234, 50_000);
    expect(reset.filter((p) => p.ledger === 'allowance').reduce((s, p) => s + p.amount, 0)).toBe(
      50_000 - 1_234,
    );
    expect(() => assertBalanced(reset)).not.toThrow();
    expect(() => assertBalanced([{ ledger: 'allowance', amount: 1 }])).toThrow(/unbalanced/);
  });
});
