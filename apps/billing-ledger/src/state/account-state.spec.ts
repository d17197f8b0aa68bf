import type { BalanceRow } from '../ledger/ledger.repository';
import { PLAN_IDS } from '@meridian/plans';
import fc from 'fast-check';
import { allowanceOf, balanceStateJson, balanceStateOf, capsOf } from './account-state';
import { returning } from '../db/returning';
import { balanceRow } from '../testing/fixtures';

const row = (overrides: Partial<BalanceRow> = {}): BalanceRow =>
  balanceRow({
    allowance: 10,
    pending: 5,
    allowanceTotal: 50_000,
    periodStart: new Date('2026-01-05T07:30:00Z'),
    periodEnd: new Date('2026-01-06T07:30:00Z'),
    version: 3,
    planId: 'free',
    ...overrides,
  });

describe('account state', () => {
  it.each([
    ['free', false, 20, 2, 1, 5],
    ['starter', false, 250, 30, 10, 100],
    [null, false, 20, 2, 0, 0],
    [null, true, 20, 2, 1, 0],
  ] as const)(
    'plan %s (node owner %s): node rps %i, tokens %i, webhooks %i, audit checks %i',
    (planId, nodeOwner, rps, tokens, webhooks, audit) => {
      const caps = capsOf(row({ planId, nodeOwner }));
      expect([
        caps.nodeRps,
        caps.accessTokens,
        caps.webhooks.activeWebhooks,
        caps.audit.checksPerPeriod,
      ]).toEqual([rps, tokens, webhooks, audit]);
    },
  );

  it('applies an enterprise contract and grants no allowance without a plan', () => {
    expect(allowanceOf(row({ planId: 'enterprise', contract: { allowanceCu: 7 } }))).toBe(7);
    expect(allowanceOf(row({ planId: null }))).toBe(0);
  });

  it('marks exhaustion with its start time and a versioned id', () => {
    const now = new Date('2026-01-05T12:00:00Z');
    expect(balanceStateOf(row(), now)).toMatchObject({
      id: 'acc_1:balance:3',
      state: 'ok',
      exhaustedSince: null,
      pendingTopUpCu: 5,
    });
    const since = new Date('2026-01-05T11:00:00Z');
    expect(balanceStateOf(row({ allowance: 0, exhaustedSince: since }), now)).toMatchObject({
      state: 'exhausted',
      exhaustedSince: since.toISOString(),
    });
  });
});

describe('returning', () => {
  it('unwraps TypeORM UPDATE results and passes INSERT/SELECT rows through', () => {
    expect(returning([[{ id: 1 }], 1])).toEqual([{ id: 1 }]);
    expect(returning([[], 0])).toEqual([]);
    expect(returning([{ id: 1 }])).toEqual([{ id: 1 }]);
  });

  it('writes the balance state JSON byte for byte as JSON.stringify of balanceStateOf', () => {
    const date = fc.date({
      min: new Date('2020-01-01T00:00:00Z'),
      max: new Date('2030-01-01T00:00:00Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(
        fc.record({
          accountId: fc.stringMatching(/^acc_[0-9a-f]{24}$/),
          allowance: fc.integer({ min: -1_000_000, max: 1_000_000_000 }),
          purchased: fc.nat(),
          pending: fc.nat(),
          version: fc.nat(),
          planId: fc.constantFrom(null, ...PLAN_IDS),
          contract: fc.constantFrom(null, { allowanceCu: 7 }, { nodeRps: 900 }),
          nodeOwner: fc.boolean(),
          accountType: fc.constantFrom('individual' as const, 'team' as const),
          periodEnd: fc.option(date, { nil: null }),
          exhaustedSince: fc.option(date, { nil: null }),
        }),
        date,
        (fields, now) => {
          const r = row(fields);
          expect(balanceStateJson(r, now)).toBe(JSON.stringify(balanceStateOf(r, now)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
