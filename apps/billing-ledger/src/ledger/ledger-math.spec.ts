import fc from 'fast-check';
import {
  allowanceResetPostings,
  applyUsageCharge,
  assertBalanced,
  chainSpendOf,
  chargeUsage,
  debtPaidBy,
  isExhausted,
  isLateUsage,
  nextExhaustedSince,
  planChangeGrant,
  planChangeTerms,
  purchasedAndOverdraft,
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
    const pools = { allowance: 10, purchased: 0, prior: null };
    const after = applyUsageCharge(pools, chargeUsage(pools, 0, 35));
    expect(after).toEqual({ allowance: 0, purchased: -25, prior: null });
  });

  it('refuses negative or fractional charges', () => {
    expect(() => splitCharge({ allowance: 1, purchased: 1 }, -1)).toThrow(RangeError);
    expect(() => splitCharge({ allowance: 1, purchased: 1 }, 1.5)).toThrow(RangeError);
  });
});

describe('purchasedAndOverdraft (the views of the signed purchased pool)', () => {
  it('shows purchased CU never below zero and what was spent past zero as the overdraft', () => {
    expect(purchasedAndOverdraft(7_000)).toEqual({ purchased: 7_000, overdraft: 0 });
    expect(purchasedAndOverdraft(0)).toEqual({ purchased: 0, overdraft: 0 });
    expect(purchasedAndOverdraft(-2_000)).toEqual({ purchased: 0, overdraft: 2_000 });
  });
  it('loses nothing: purchased - overdraft is the pool', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (pool) => {
        const { purchased, overdraft } = purchasedAndOverdraft(pool);
        return purchased >= 0 && overdraft >= 0 && purchased - overdraft === pool;
      }),
    );
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

describe('chargeUsage (late usage is charged to the period it was metered in, ADR 0108)', () => {
  const sum = (postings: ReturnType<typeof usagePostings>, ledger: string) =>
    postings.filter((p) => p.ledger === ledger).reduce((s, p) => s + p.amount, 0);

  it('without a prior period every CU is current, late or not', () => {
    const pools = { allowance: 1_000, purchased: 0, prior: null };
    const charge = chargeUsage(pools, 300, 300);
    expect(charge.late).toEqual({ fromAllowance: 0, fromPurchased: 0, overdraft: 0 });
    expect(charge.current.fromAllowance).toBe(300);
    expect(applyUsageCharge(pools, charge)).toEqual({ allowance: 700, purchased: 0, prior: null });
  });

  it('takes late CU back from what the prior period left; the current allowance is untouched', () => {
    const pools = { allowance: 50_000, purchased: 0, prior: 30_000 };
    const charge = chargeUsage(pools, 1_000, 1_400);
    expect(charge.postings).toEqual([
      { ledger: 'allowance_expired', amount: -1_000 },
      { ledger: 'usage', amount: 1_000 },
      { ledger: 'allowance', amount: -400 },
      { ledger: 'usage', amount: 400 },
    ]);
    expect(applyUsageCharge(pools, charge)).toEqual({
      allowance: 49_600,
      purchased: 0,
      prior: 29_000,
    });
  });

  it('late CU beyond what the prior left go to purchased as they would have then, overdraft included', () => {
    const pools = { allowance: 50_000, purchased: 500, prior: 100 };
    const charge = chargeUsage(pools, 1_000, 1_000);
    expect(charge.late).toEqual({ fromAllowance: 100, fromPurchased: 900, overdraft: 400 });
    expect(charge.overdraft).toBe(400);
    expect(applyUsageCharge(pools, charge)).toEqual({
      allowance: 50_000,
      purchased: -400,
      prior: 0,
    });
  });

  it('late usage spends purchased CU before current usage does (it is older)', () => {
    const pools = { allowance: 10, purchased: 100, prior: 0 };
    const charge = chargeUsage(pools, 100, 150);
    expect(charge.late.fromPurchased).toBe(100);
    expect(charge.current).toEqual({ fromAllowance: 10, fromPurchased: 40, overdraft: 40 });
    expect(applyUsageCharge(pools, charge)).toEqual({ allowance: 0, purchased: -40, prior: 0 });
  });

  it('refuses late CU that are not part of the charge', () => {
    const pools = { allowance: 1, purchased: 1, prior: 1 };
    expect(() => chargeUsage(pools, 2, 1)).toThrow(RangeError);
    expect(() => chargeUsage(pools, -1, 1)).toThrow(RangeError);
    expect(() => chargeUsage(pools, 0.5, 1)).toThrow(RangeError);
  });

  it('for any pools and split: balanced, every CU charged once, no allowance below zero', () => {
    fc.assert(
      fc.property(
        fc.nat(1_000_000),
        fc.integer({ min: -1_000, max: 1_000_000 }),
        fc.option(fc.nat(1_000_000), { nil: null }),
        fc.nat(1_000_000),
        fc.nat(1_000_000),
        (allowance, purchased, prior, a, b) => {
          const [lateCu, totalCu] = a <= b ? [a, b] : [b, a];
          const pools = { allowance, purchased, prior };
          const charge = chargeUsage(pools, lateCu, totalCu);
          const after = applyUsageCharge(pools, charge);
          assertBalanced(charge.postings);
          expect(sum(charge.postings, 'usage')).toBe(totalCu);
          expect(after.allowance).toBeGreaterThanOrEqual(0);
          if (after.prior !== null) expect(after.prior).toBeGreaterThanOrEqual(0);
          // What left the pools is what the postings say left them.
          expect(after.allowance - allowance).toBe(sum(charge.postings, 'allowance'));
          expect(after.purchased - purchased).toBe(sum(charge.postings, 'purchased'));
          expect((after.prior ?? 0) - (prior ?? 0)).toBe(sum(charge.postings, 'allowance_expired'));
          if (prior === null) expect(charge.late.fromAllowance + charge.late.fromPurchased).toBe(0);
        },
      ),
    );
  });
});

describe('isLateUsage (ADR 0108)', () => {
  const periodStart = new Date('2026-01-06T07:30:00.000Z');
  it.each([
    ['2026-01-06T07:29:59.999Z', 0, true],
    ['2026-01-06T07:30:00.000Z', 0, true],
    ['2026-01-06T07:30:00.001Z', 0, false],
    ['2026-01-06T07:29:59.999Z', null, false],
  ] as const)('window ending %s with prior %s: late %s', (windowEnd, prior, late) => {
    expect(isLateUsage(windowEnd, { prior, periodStart })).toBe(late);
  });
  it('is never late without a period', () => {
    expect(isLateUsage('2026-01-01T00:00:00.000Z', { prior: 5, periodStart: null })).toBe(false);
  });
});

describe('isLateUsage after a plan change into a period that started before it (ADR 0109)', () => {
  // A change to Free at 11:00: Free's day window began at 07:30, the account's period at 11:00.
  const account = {
    prior: 1_000,
    periodStart: new Date('2026-01-06T07:30:00.000Z'),
    planStartedAt: new Date('2026-01-06T11:00:00.000Z'),
  };
  it.each([
    ['2026-01-06T10:59:59.000Z', true],
    ['2026-01-06T11:00:00.000Z', true],
    ['2026-01-06T11:00:00.001Z', false],
  ] as const)('window ending %s: late %s', (windowEnd, late) => {
    expect(isLateUsage(windowEnd, account)).toBe(late);
  });
  it('a natural roll after the change: the period start is the boundary', () => {
    const rolled = { ...account, periodStart: new Date('2026-01-07T07:30:00.000Z') };
    expect(isLateUsage('2026-01-07T07:29:59.000Z', rolled)).toBe(true);
    expect(isLateUsage('2026-01-07T07:30:00.001Z', rolled)).toBe(false);
  });
});

describe('planChangeGrant (ADR 0109)', () => {
  it.each([
    [90_000_000, 0, 90_000_000],
    [90_000_000, 3_000_000, 87_000_000],
    [185_000_000, 40_000_000, 145_000_000],
    [50_000, 3_000_000, 0],
    [90_000_000, 90_000_000, 0],
    [0, 5, 0],
  ])('allowance %d, chain spent %d: grants %d', (allowance, spent, grant) => {
    expect(planChangeGrant(allowance, spent)).toBe(grant);
  });
});

describe('chainSpendOf (ADR 0109)', () => {
  const charge = chargeUsage({ allowance: 100, purchased: 50, prior: 30 }, 40, 140);
  it('counts what the charge took of the current allowance', () => {
    expect(charge.current.fromAllowance).toBe(100);
    expect(chainSpendOf(charge, false)).toBe(100);
  });
  it("and of the prior period's remainder when that period is of the same chain", () => {
    expect(charge.late.fromAllowance).toBe(30);
    expect(chainSpendOf(charge, true)).toBe(130);
  });
});

describe('debtPaidBy: a new allowance pays the debt first (ADR 0101 amendment)', () => {
  it.each([
    // grant, purchased pool → paid
    [50_000, -80_000, 50_000],
    [50_000, -30_000, 30_000],
    [50_000, 0, 0],
    [50_000, 7_000, 0],
    [0, -80_000, 0],
  ])('grant %i, purchased %i: %i paid', (grant, purchased, paid) => {
    expect(debtPaidBy(grant, purchased)).toBe(paid);
  });

  it('for any grant and pool: balanced postings, the allowance and the pool never past zero', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: -1e9, max: 1e9 }),
        (remaining, grant, purchased) => {
          const paid = debtPaidBy(grant, purchased);
          const postings = allowanceResetPostings(remaining, grant, paid);
          assertBalanced(postings);
          const sum = (ledger: string) =>
            postings.filter((p) => p.ledger === ledger).reduce((t, p) => t + p.amount, 0);
          expect(remaining + sum('allowance')).toBe(grant - paid);
          expect(grant - paid).toBeGreaterThanOrEqual(0);
          expect(purchased + sum('purchased')).toBe(
            Math.min(purchased + grant, Math.max(purchased, 0)),
          );
        },
      ),
    );
  });
});

describe('planChangeTerms (ADR 0109 amendment: the renewal anchor and a left paid period)', () => {
  const anchor = new Date('2026-06-03T10:00:00.000Z');
  const end = new Date('2026-07-03T10:00:00.000Z');
  const now = new Date('2026-06-10T12:00:00.000Z');
  const base = { now, anchor, periodEnd: end, chainSpent: 301_000, left: null };

  it('paid -> paid keeps the anchor and deducts the chain', () => {
    expect(planChangeTerms({ ...base, fromPaid: true, toPaid: true })).toEqual({
      anchor,
      spent: 301_000,
      left: null,
    });
  });

  it('paid -> Free keeps the paid period until its end; Free <-> none keeps it as it is', () => {
    const left = { anchor, end, spent: 301_000 };
    expect(planChangeTerms({ ...base, fromPaid: true, toPaid: false })).toEqual({
      anchor,
      spent: 301_000,
      left,
    });
    const later = new Date('2026-06-11T12:00:00.000Z');
    expect(
      planChangeTerms({ ...base, now: later, fromPaid: false, toPaid: false, chainSpent: 9, left })
        .left,
    ).toEqual(left);
  });

  it.each([
    // chain spent since (a Free day's), the left period's spend → deducted
    [0, 301_000, 301_000],
    [40_000, 301_000, 301_000],
    [400_000, 301_000, 400_000],
  ])(
    'Free -> paid before the end resumes the period: chain %i, left %i -> %i spent',
    (chainSpent, spent, deducted) => {
      const later = new Date('2026-06-20T12:00:00.000Z');
      expect(
        planChangeTerms({
          now: later,
          anchor: later,
          periodEnd: null,
          chainSpent,
          fromPaid: false,
          toPaid: true,
          left: { anchor, end, spent },
        }),
      ).toEqual({ anchor, spent: deducted, left: null });
    },
  );

  it('Free -> paid at or after the end is a new subscription anchored now', () => {
    expect(
      planChangeTerms({
        now: end,
        anchor,
        periodEnd: null,
        chainSpent: 7,
        fromPaid: false,
        toPaid: true,
        left: { anchor, end, spent: 301_000 },
      }),
    ).toEqual({ anchor: end, spent: 7, left: null });
  });
});
