import { Events, KvBuckets, type BalanceStateChanged } from '@meridian/contracts';
import { balanceResponse } from '../http/response.schemas';
import { LedgerTicker } from './ledger-ticker.service';
import { checkLedger, ledgerHolds } from './ledger-check';
import { LedgerRepository, type JournalInput } from './ledger.repository';
import {
  accountBalance,
  api,
  balanceAfter,
  BillingHarness,
  type AccountBalance,
  eventually,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';

type Balance = AccountBalance;

describe('billing-ledger ledger (real Postgres + NATS, fake clock)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const tick = () => billing.app.get(LedgerTicker).tick();

  async function newAccount(
    plan: string | null = 'free',
    type = 'individual',
  ): Promise<{ id: string; key: string }> {
    const created = await api<{ account: { id: string }; api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      {
        name: 'test',
        type,
        plan,
      },
    );
    expect(created.status).toBe(201);
    return { id: created.body.account.id, key: created.body.api_key.key };
  }

  const balance = (key: string) => accountBalance(billing.url, key);

  /** Publishes usage of a window starting at `at` and waits for its new balance. */
  const spend = (accountId: string, key: string, cu: number, at?: string): Promise<Balance> =>
    balanceAfter(billing.url, key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(accountId, cu, at)),
    );

  afterEach(async () => {
    const report = await checkLedger(h.dataSource);
    expect(report.unbalancedJournals).toEqual([]);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
    expect(report.total).toBe(0);
  });

  it('runs usage transactions without Postgres JIT (their row estimates made it compile every statement)', async () => {
    const ledger = billing.app.get(LedgerRepository);
    const inUsage = await ledger.usageTransaction(
      async (manager) => ((await manager.query('SHOW jit')) as Array<{ jit: string }>)[0]!.jit,
    );
    expect(inUsage).toBe('off');
    // SET LOCAL: the pooled connection is back to the server's setting afterwards.
    const after = await ledger.transaction(
      async (manager) => ((await manager.query('SHOW jit')) as Array<{ jit: string }>)[0]!.jit,
    );
    expect(after).toBe(((await h.dataSource.query('SHOW jit')) as Array<{ jit: string }>)[0]!.jit);
  });

  it('resets the Free allowance at 07:30 UTC to 50,000 CU without rolling the rest over', async () => {
    h.clock.set('2026-01-05T10:00:00.000Z');
    const { id, key } = await newAccount('free');
    const start = await balance(key);
    expect(start).toMatchObject({
      allowance_cu: 50_000,
      purchased_cu: 0,
      state: 'ok',
      allowance_resets_at: '2026-01-06T07:30:00.000Z',
    });

    expect((await spend(id, key, 20_000)).allowance_cu).toBe(30_000);

    h.clock.set('2026-01-06T07:29:59.999Z');
    await tick();
    expect((await balance(key)).allowance_cu).toBe(30_000);

    h.clock.set('2026-01-06T07:30:00.000Z');
    await tick();
    const after = await balance(key);
    expect(after.allowance_cu).toBe(50_000);
    expect(after.allowance_resets_at).toBe('2026-01-07T07:30:00.000Z');

    // A second tick in the same period grants nothing more.
    h.clock.set('2026-01-06T12:00:00.000Z');
    await tick();
    expect((await balance(key)).allowance_cu).toBe(50_000);
  });

  it('charges usage metered before the 07:30 reset but applied after it to the day it was metered in (ADR 0108)', async () => {
    h.clock.set('2026-02-02T10:00:00.000Z');
    const { id, key } = await newAccount('free');
    expect((await spend(id, key, 20_000, '2026-02-02T10:00:00.000Z')).allowance_cu).toBe(30_000);

    h.clock.set('2026-02-03T07:30:00.000Z');
    await tick();
    expect(await balance(key)).toMatchObject({ allowance_cu: 50_000, purchased_cu: 0 });

    // Metered in the window ending at 07:29:59, applied after the reset: the 30,000 CU that
    // day left pay for it, not today's allowance.
    expect(await spend(id, key, 1_000, '2026-02-03T07:29:58.000Z')).toMatchObject({
      allowance_cu: 50_000,
      purchased_cu: 0,
    });
    // Metered today: today's allowance.
    expect((await spend(id, key, 400, '2026-02-03T07:30:00.000Z')).allowance_cu).toBe(49_600);
    // More late usage than yesterday left (29,000): the rest is what it would have been
    // yesterday, an overdraft of purchased CU (paid by the next top-up); today's allowance stays.
    expect(await spend(id, key, 40_000, '2026-02-03T07:29:57.000Z')).toMatchObject({
      allowance_cu: 49_600,
      purchased_cu: 0,
      overdraft_cu: 11_000,
      total_cu: 49_600,
      state: 'ok',
    });
    const journals: Array<{ amount_cu: string; overdraft_cu: string; detail: unknown }> =
      await h.dataSource.query(
        `SELECT amount_cu, overdraft_cu, detail FROM billing.journals
          WHERE account_id = $1 AND kind = 'usage' ORDER BY id`,
        [id],
      );
    expect(journals.map((j) => [Number(j.amount_cu), Number(j.overdraft_cu), j.detail])).toEqual([
      [20_000, 0, expect.not.objectContaining({ lateCu: expect.anything() })],
      [1_000, 0, expect.objectContaining({ lateCu: 1_000, priorOf: '2026-02-03T07:30:00.000Z' })],
      [400, 0, expect.not.objectContaining({ lateCu: expect.anything() })],
      [40_000, 11_000, expect.objectContaining({ lateCu: 40_000 })],
    ]);
    const [expired] = await h.dataSource.query(
      `SELECT sum(amount_cu) AS cu FROM billing.entries
        WHERE account_id = $1 AND ledger = 'allowance_expired'`,
      [id],
    );
    expect(Number(expired.cu)).toBe(0);

    // Tamper with what the prior period left: the ledger check must notice.
    await h.dataSource.query(
      'UPDATE billing.balances SET prior_allowance_cu = prior_allowance_cu + 1 WHERE account_id = $1',
      [id],
    );
    expect((await checkLedger(h.dataSource, [id])).priorMismatches).toEqual([
      { accountId: id, balance: 1, entries: 0 },
    ]);
    await h.dataSource.query(
      'UPDATE billing.balances SET prior_allowance_cu = prior_allowance_cu - 1 WHERE account_id = $1',
      [id],
    );
  });

  it("charges usage metered before a plan change but applied after it to the old plan's allowance (ADR 0108)", async () => {
    h.clock.set('2026-03-02T10:00:00.000Z');
    const { id, key } = await newAccount('starter');
    expect((await spend(id, key, 1_000, '2026-03-02T10:00:00.000Z')).allowance_cu).toBe(89_999_000);
    h.clock.set('2026-03-02T12:00:00.000Z');
    const changed = await api(billing.url, 'PUT', '/api/v1/account/plan', key, { plan: 'growth' });
    expect(changed.status).toBe(200);
    // Growth's allowance less what Starter's period spent (ADR 0109).
    expect(await balance(key)).toMatchObject({ allowance_cu: 184_999_000 });
    // Metered on Starter in the window ending 11:59:59, applied after the change.
    expect(await spend(id, key, 500, '2026-03-02T11:59:58.000Z')).toMatchObject({
      allowance_cu: 184_999_000,
      purchased_cu: 0,
    });
    expect((await spend(id, key, 200, '2026-03-02T12:00:00.000Z')).allowance_cu).toBe(184_998_800);
  });

  describe('a plan change grants the new allowance less what the allowance chain spent (ADR 0109)', () => {
    const setPlan = async (key: string, plan: string): Promise<Balance> => {
      const changed = await api<{ plan: string }>(billing.url, 'PUT', '/api/v1/account/plan', key, {
        plan,
      });
      expect([changed.status, changed.body.plan]).toEqual([200, plan]);
      return balance(key);
    };
    const allowanceJournals = async (id: string) =>
      (
        (await h.dataSource.query(
          `SELECT kind, amount_cu FROM billing.journals
            WHERE account_id = $1 AND kind IN ('allowance_reset', 'plan_change') ORDER BY id`,
          [id],
        )) as Array<{ kind: string; amount_cu: string }>
      ).map((j) => [j.kind, Number(j.amount_cu)]);

    it('Starter -> Free -> Starter in one period refills nothing, however often; purchased CU are kept', async () => {
      h.clock.set('2026-04-02T10:00:00.000Z');
      // A team: its plan may also be none (an individual account needs one), tried below.
      const { id, key } = await newAccount('starter', 'team');
      const topUp = await api(billing.url, 'POST', '/api/v1/top-ups', key, { cu: 7_000 });
      expect(topUp.status).toBe(201);
      h.clock.set('2026-04-02T10:05:00.000Z');
      await tick();
      expect(await spend(id, key, 3_000_000, '2026-04-02T10:05:00.000Z')).toMatchObject({
        allowance_cu: 87_000_000,
        purchased_cu: 7_000,
      });

      h.clock.set('2026-04-02T11:00:00.000Z');
      // Free's 50,000 a day less the 3,000,000 spent: nothing; purchased CU still spendable.
      expect(await setPlan(key, 'free')).toMatchObject({
        allowance_cu: 0,
        allowance_total_cu: 50_000,
        purchased_cu: 7_000,
        total_cu: 7_000,
        state: 'ok',
      });
      // Metered on Starter before the change, applied after it: Starter's remainder pays
      // (ADR 0108), and it is spent of the same chain.
      expect(await spend(id, key, 500, '2026-04-02T10:59:58.000Z')).toMatchObject({
        allowance_cu: 0,
        purchased_cu: 7_000,
      });

      h.clock.set('2026-04-02T11:30:00.000Z');
      // The Starter period resumes: its spend and its renewal (ADR 0109 amendment).
      expect(await setPlan(key, 'starter')).toMatchObject({
        allowance_cu: 90_000_000 - 3_000_500,
        allowance_total_cu: 90_000_000,
        purchased_cu: 7_000,
        allowance_resets_at: '2026-05-02T10:00:00.000Z',
      });
      // Flipping again gives back nothing either.
      h.clock.set('2026-04-02T11:40:00.000Z');
      expect((await setPlan(key, 'free')).allowance_cu).toBe(0);
      h.clock.set('2026-04-02T11:50:00.000Z');
      expect(await setPlan(key, 'starter')).toMatchObject({
        allowance_cu: 86_999_500,
        purchased_cu: 7_000,
      });
      // No plan (a team's choice) and back: the same chain.
      expect((await setPlan(key, 'growth')).allowance_cu).toBe(185_000_000 - 3_000_500);
      const none = await api(
        billing.url,
        'PUT',
        `/api/v1/admin/accounts/${id}/plan`,
        OPERATOR_TOKEN,
        {
          plan: null,
        },
      );
      expect(none.status).toBe(200);
      expect((await setPlan(key, 'starter')).allowance_cu).toBe(86_999_500);
      expect(await allowanceJournals(id)).toEqual([
        ['plan_change', 90_000_000],
        ['plan_change', 0],
        ['plan_change', 86_999_500],
        ['plan_change', 0],
        ['plan_change', 86_999_500],
        ['plan_change', 181_999_500],
        ['plan_change', 0],
        ['plan_change', 86_999_500],
      ]);
    });

    it('an upgrade after spending grants the new allowance less the spend; the next renewal grants it in full', async () => {
      h.clock.set('2026-04-02T10:00:00.000Z');
      const { id, key } = await newAccount('starter');
      expect((await spend(id, key, 40_000_000, '2026-04-02T10:00:00.000Z')).allowance_cu).toBe(
        50_000_000,
      );
      h.clock.set('2026-04-10T12:00:00.000Z');
      // Between paid plans the renewal stays where it was (ADR 0109 amendment).
      expect(await setPlan(key, 'growth')).toMatchObject({
        allowance_cu: 145_000_000,
        allowance_total_cu: 185_000_000,
        allowance_resets_at: '2026-05-02T10:00:00.000Z',
      });
      expect((await spend(id, key, 5_000_000, '2026-04-10T12:00:00.000Z')).allowance_cu).toBe(
        140_000_000,
      );
      // A downgrade in the same chain: Starter's 90,000,000 less the 45,000,000 spent.
      h.clock.set('2026-04-11T12:00:00.000Z');
      expect((await setPlan(key, 'starter')).allowance_cu).toBe(45_000_000);
      // The monthly renewal (at the anchor) is a natural roll: the full allowance.
      h.clock.set('2026-05-02T09:59:59.999Z');
      await tick();
      expect((await balance(key)).allowance_cu).toBe(45_000_000);
      h.clock.set('2026-05-02T10:00:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({
        allowance_cu: 90_000_000,
        allowance_total_cu: 90_000_000,
        allowance_resets_at: '2026-06-02T10:00:00.000Z',
      });
      // And a new chain: a change now deducts only what was spent since the renewal.
      await spend(id, key, 1_000, '2026-05-02T10:00:00.000Z');
      h.clock.set('2026-05-02T13:00:00.000Z');
      expect((await setPlan(key, 'growth')).allowance_cu).toBe(184_999_000);
    });

    it("a Free 07:30 roll after a change grants the full 50,000; a roll the tick has not reached yet comes before a change; Starter's period resumes", async () => {
      h.clock.set('2026-04-02T10:00:00.000Z');
      const { id, key } = await newAccount('starter');
      await spend(id, key, 60_000, '2026-04-02T10:00:00.000Z');
      h.clock.set('2026-04-02T11:00:00.000Z');
      expect(await setPlan(key, 'free')).toMatchObject({ allowance_cu: 0, state: 'exhausted' });
      h.clock.set('2026-04-03T07:30:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({ allowance_cu: 50_000, state: 'ok' });
      await spend(id, key, 2_000, '2026-04-03T07:30:00.000Z');
      // 04-04 07:30 passed without a tick: the change rolls the Free day first (a new chain,
      // nothing of it spent), then resumes the Starter period left on 04-02, which ends on
      // 05-02: its 60,000 spent stay spent (ADR 0109 amendment).
      h.clock.set('2026-04-04T08:00:00.000Z');
      expect(await setPlan(key, 'starter')).toMatchObject({
        allowance_cu: 89_940_000,
        allowance_resets_at: '2026-05-02T10:00:00.000Z',
      });
      expect(await allowanceJournals(id)).toEqual([
        ['plan_change', 90_000_000],
        ['plan_change', 0],
        ['allowance_reset', 50_000],
        ['allowance_reset', 50_000],
        ['plan_change', 89_940_000],
      ]);
    });

    it('a return to a paid plan before its period ends resumes it, anchor and spend (QA: Pro -> Free -> 07:30 -> Pro refilled); paid plans keep the anchor', async () => {
      h.clock.set('2026-06-03T10:00:00.000Z');
      const { id, key } = await newAccount('pro');
      expect(await spend(id, key, 301_000, '2026-06-03T10:00:00.000Z')).toMatchObject({
        allowance_cu: 999_699_000,
        allowance_resets_at: '2026-07-03T10:00:00.000Z',
      });
      h.clock.set('2026-06-03T11:00:00.000Z');
      expect((await setPlan(key, 'free')).allowance_cu).toBe(0);
      h.clock.set('2026-06-04T07:30:00.000Z');
      await tick();
      expect((await balance(key)).allowance_cu).toBe(50_000);
      await spend(id, key, 1_000, '2026-06-04T07:30:00.000Z');
      h.clock.set('2026-06-04T09:00:00.000Z');
      // Was 1,000,000,000 again, renewing 07-04 09:00: a month's allowance every day for free.
      expect(await setPlan(key, 'pro')).toMatchObject({
        allowance_cu: 1_000_000_000 - 301_000,
        allowance_total_cu: 1_000_000_000,
        allowance_resets_at: '2026-07-03T10:00:00.000Z',
      });
      // An upgrade keeps the renewal date; its grant deducts the period's spend.
      h.clock.set('2026-06-20T12:00:00.000Z');
      expect(await setPlan(key, 'premium')).toMatchObject({
        allowance_cu: 1_600_000_000 - 301_000,
        allowance_resets_at: '2026-07-03T10:00:00.000Z',
      });
      h.clock.set('2026-07-03T10:00:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({
        allowance_cu: 1_600_000_000,
        allowance_resets_at: '2026-08-03T10:00:00.000Z',
      });
      // Left for Free, back after that period's end: a new subscription, anchored at the return.
      h.clock.set('2026-07-04T10:00:00.000Z');
      await spend(id, key, 5_000, '2026-07-04T10:00:00.000Z');
      expect((await setPlan(key, 'free')).allowance_cu).toBe(45_000);
      h.clock.set('2026-08-05T08:00:00.000Z');
      await tick();
      expect(await setPlan(key, 'pro')).toMatchObject({
        allowance_cu: 1_000_000_000,
        allowance_resets_at: '2026-09-05T08:00:00.000Z',
      });
    });

    it('counts, for a row written before the chain was stored, what its current period spent', async () => {
      h.clock.set('2026-04-02T10:00:00.000Z');
      const { id, key } = await newAccount('starter');
      await spend(id, key, 1_000_000, '2026-04-02T10:00:00.000Z');
      // As the migration leaves a row (or a roll by a replica of an older release): no count.
      await h.dataSource.query(
        `UPDATE billing.balances SET chain_spent_cu = 0, chain_of = NULL, version = version + 1
          WHERE account_id = $1`,
        [id],
      );
      h.clock.set('2026-04-02T11:00:00.000Z');
      expect((await setPlan(key, 'free')).allowance_cu).toBe(0);
      expect((await setPlan(key, 'starter')).allowance_cu).toBe(89_000_000);
    });
  });

  it('keeps no prior period for late usage once the period moved on without one (a roll by a replica of an older release)', async () => {
    h.clock.set('2026-02-02T10:00:00.000Z');
    const { id, key } = await newAccount('free');
    await spend(id, key, 20_000, '2026-02-02T10:00:00.000Z');
    h.clock.set('2026-02-03T07:30:00.000Z');
    await tick();
    // An older release's roll to the next day: the period moves (a new version of the row),
    // what was kept for 02-03 stays.
    await h.dataSource.query(
      `UPDATE billing.balances SET period_start = period_start + interval '1 day',
              period_end = period_end + interval '1 day', version = version + 1
        WHERE account_id = $1`,
      [id],
    );
    h.clock.set('2026-02-04T07:30:00.500Z');
    // Metered on 02-03, late for 02-04's period: there is no remainder of 02-03 to charge
    // (the one kept is 02-02's), so it is charged to the current allowance as before ADR 0108.
    expect(await spend(id, key, 1_000, '2026-02-04T07:29:58.000Z')).toMatchObject({
      allowance_cu: 49_000,
      purchased_cu: 0,
    });
    expect(await checkLedger(h.dataSource, [id])).toMatchObject({ priorMismatches: [] });
  });

  describe('a new allowance pays the overdraft first, as a top-up does (ADR 0101 amendment)', () => {
    const debtPaid = async (id: string) =>
      (
        (await h.dataSource.query(
          `SELECT (detail->>'debtPaidCu')::bigint AS paid FROM billing.journals
            WHERE account_id = $1 AND detail ? 'debtPaidCu' ORDER BY id`,
          [id],
        )) as Array<{ paid: string }>
      ).map((j) => Number(j.paid));

    it("Free's 07:30 refill pays the debt before anything is spendable", async () => {
      h.clock.set('2026-06-03T10:00:00.000Z');
      const { id, key } = await newAccount('free');
      expect(await spend(id, key, 130_000, '2026-06-03T10:00:00.000Z')).toMatchObject({
        allowance_cu: 0,
        overdraft_cu: 80_000,
        state: 'exhausted',
      });
      // Was: 50,000 spendable and the 80,000 debt untouched, every day.
      h.clock.set('2026-06-04T07:30:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({
        allowance_cu: 0,
        allowance_total_cu: 50_000,
        overdraft_cu: 30_000,
        total_cu: 0,
        state: 'exhausted',
      });
      h.clock.set('2026-06-05T07:30:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({
        allowance_cu: 20_000,
        purchased_cu: 0,
        overdraft_cu: 0,
        total_cu: 20_000,
        state: 'ok',
      });
      expect(await debtPaid(id)).toEqual([50_000, 30_000]);
    });

    it('the monthly renewal pays it (QA: overdraft 100,000 on an allowance of 20,000), and a plan change does not grant the payment again', async () => {
      h.clock.set('2026-06-03T10:00:00.000Z');
      const created = await api<{ account: { id: string }; api_key: { key: string } }>(
        billing.url,
        'POST',
        '/api/v1/admin/accounts',
        OPERATOR_TOKEN,
        { name: 'contract', plan: 'enterprise', contract: { allowance_cu: 20_000 } },
      );
      const { id } = created.body.account;
      const { key } = created.body.api_key;
      expect(await spend(id, key, 120_000, '2026-06-03T10:00:00.000Z')).toMatchObject({
        allowance_cu: 0,
        overdraft_cu: 100_000,
        state: 'exhausted',
      });
      h.clock.set('2026-07-03T10:00:00.000Z');
      await tick();
      expect(await balance(key)).toMatchObject({
        allowance_cu: 0,
        allowance_total_cu: 20_000,
        overdraft_cu: 80_000,
        state: 'exhausted',
      });
      // Starter's 90,000,000 less the 20,000 the renewal paid of the debt, then the rest of it.
      const changed = await api(
        billing.url,
        'PUT',
        `/api/v1/admin/accounts/${id}/plan`,
        OPERATOR_TOKEN,
        { plan: 'starter' },
      );
      expect(changed.status).toBe(200);
      expect(await balance(key)).toMatchObject({
        allowance_cu: 90_000_000 - 20_000 - 80_000,
        overdraft_cu: 0,
        state: 'ok',
        allowance_resets_at: '2026-08-03T10:00:00.000Z',
      });
      expect(await debtPaid(id)).toEqual([20_000, 80_000]);
    });
  });

  it('keeps a top-up pending until TOPUP_CLEARING_MS has passed on the clock, then makes it spendable', async () => {
    h.clock.set('2026-01-05T10:00:00.000Z');
    const { key } = await newAccount('free');
    const created = await api<{ id: string; status: string; clears_at: string }>(
      billing.url,
      'POST',
      '/api/v1/top-ups',
      key,
      { cu: 10_000 },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      clears_at: '2026-01-05T10:01:30.000Z',
    });
    expect(await balance(key)).toMatchObject({
      purchased_cu: 0,
      pending_top_up_cu: 10_000,
      total_cu: 50_000,
    });

    h.clock.set('2026-01-05T10:01:29.999Z');
    await tick();
    expect(await balance(key)).toMatchObject({ purchased_cu: 0, pending_top_up_cu: 10_000 });

    h.clock.set('2026-01-05T10:01:30.000Z');
    await tick();
    expect(await balance(key)).toMatchObject({
      purchased_cu: 10_000,
      pending_top_up_cu: 0,
      total_cu: 60_000,
    });
    const list = await api<{ items: Array<{ id: string; status: string }> }>(
      billing.url,
      'GET',
      '/api/v1/top-ups',
      key,
    );
    expect(list.body.items).toEqual([
      expect.objectContaining({ id: created.body.id, status: 'cleared' }),
    ]);
  });

  it('spends the allowance first, then purchased CU, and records an overdraft instead of dropping usage', async () => {
    h.clock.set('2026-01-05T10:00:00.000Z');
    const { id, key } = await newAccount('free');
    await api(billing.url, 'POST', '/api/v1/top-ups', key, { cu: 10_000 });
    h.clock.advance(90_000);
    await tick();

    expect(await spend(id, key, 45_000)).toMatchObject({
      allowance_cu: 5_000,
      purchased_cu: 10_000,
    });
    expect(await spend(id, key, 8_000)).toMatchObject({
      allowance_cu: 0,
      purchased_cu: 7_000,
      state: 'ok',
    });
    const overdrawn = await spend(id, key, 9_000);
    // The pool is -2,000; the view shows no purchased CU and the debt as its own member.
    expect(overdrawn).toMatchObject({
      allowance_cu: 0,
      purchased_cu: 0,
      overdraft_cu: 2_000,
      total_cu: 0,
      state: 'exhausted',
    });
    expect(balanceResponse.safeParse(overdrawn).error).toBeUndefined();
    const [pool] = await h.dataSource.query(
      'SELECT purchased_cu FROM billing.balances WHERE account_id = $1',
      [id],
    );
    expect(Number(pool.purchased_cu)).toBe(-2_000);
    const account = await api<{ balance: Balance }>(billing.url, 'GET', '/api/v1/account', key);
    expect(account.body.balance).toMatchObject({ purchased_cu: 0, overdraft_cu: 2_000 });
    // The next top-up pays the debt first.
    await api(billing.url, 'POST', '/api/v1/top-ups', key, { cu: 5_000 });
    h.clock.advance(90_000);
    await tick();
    expect(await balance(key)).toMatchObject({
      purchased_cu: 3_000,
      overdraft_cu: 0,
      total_cu: 3_000,
      state: 'ok',
    });
    const [journal] = await h.dataSource.query(
      `SELECT overdraft_cu FROM billing.journals WHERE account_id = $1 AND kind = 'usage' ORDER BY id DESC LIMIT 1`,
      [id],
    );
    expect(Number(journal.overdraft_cu)).toBe(2_000);
  });

  it('puts the exhausted state in the KV bucket on the commit that reaches zero and clears it after a top-up clears', async () => {
    // No clock here (a bound in ms is a flake on a loaded CI): the harness turns the periodic
    // tick off (LEDGER_TICK_MS 0), so nothing but the publish that follows a commit can put
    // these states; `eventually` only waits for it.
    h.clock.set('2026-01-05T10:00:00.000Z');
    const { id, key } = await newAccount('free');
    const state = () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, id);
    await eventually(async () => (await state())?.state === 'ok', 5_000, 'initial state in KV');

    await h.publisher.publish(Events.usageRecorded, nodeUsage(id, 50_000));
    const exhausted = await eventually(
      async () => {
        const s = await state();
        return s?.state === 'exhausted' ? s : undefined;
      },
      10_000,
      'exhausted in KV',
    );
    expect(exhausted).toMatchObject({
      allowanceCu: 0,
      purchasedCu: 0,
      exhaustedSince: '2026-01-05T10:00:00.000Z',
      planId: 'free',
    });

    await api(billing.url, 'POST', '/api/v1/top-ups', key, { cu: 1_000 });
    const pending = await eventually(
      async () => ((await state())?.pendingTopUpCu === 1_000 ? await state() : undefined),
      5_000,
      'pending top-up in KV',
    );
    expect(pending!.state).toBe('exhausted');

    h.clock.advance(90_000);
    await tick();
    const ok = await eventually(
      async () => ((await state())?.state === 'ok' ? await state() : undefined),
      10_000,
      'ok in KV',
    );
    expect(ok).toMatchObject({ purchasedCu: 1_000, pendingTopUpCu: 0, exhaustedSince: null });
  });

  it('proves the ledger: running balances equal the sum of entries and every journal balances', async () => {
    const report = await checkLedger(h.dataSource);
    expect(report.journals).toBeGreaterThan(5);
    // Tamper with one running sum: the check must notice.
    const [row] = await h.dataSource.query('SELECT account_id FROM billing.balances LIMIT 1');
    await h.dataSource.query(
      'UPDATE billing.balances SET purchased_cu = purchased_cu + 1 WHERE account_id = $1',
      [row.account_id],
    );
    const broken = await checkLedger(h.dataSource);
    expect(broken.balanceMismatches).toEqual([
      expect.objectContaining({ accountId: row.account_id, ledger: 'purchased' }),
    ]);
    await h.dataSource.query(
      'UPDATE billing.balances SET purchased_cu = purchased_cu - 1 WHERE account_id = $1',
      [row.account_id],
    );
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);
  });

  it('writes journals of new keys (usage batches) plainly: an existing key fails the statement, where the default skips it', async () => {
    const { id } = await newAccount('starter');
    const ledger = billing.app.get(LedgerRepository);
    const journal: JournalInput = {
      key: `test:new-keys:${id}`,
      accountId: id,
      kind: 'usage',
      amount: 5,
      occurredAt: new Date('2026-01-05T10:00:00.000Z'),
      postings: [
        { ledger: 'allowance', amount: -5 },
        { ledger: 'usage', amount: 5 },
      ],
    };
    const seen: unknown[] = [];
    await expect(
      ledger.transaction(async (manager) => {
        seen.push(await ledger.insertJournals(manager, [journal], 'new'));
        seen.push(await ledger.insertJournals(manager, [journal])); // may_exist: skipped
        const [{ n }] = await manager.query(
          'SELECT count(*)::int AS n FROM billing.entries e JOIN billing.journals j ON j.id = e.journal_id WHERE j.idempotency_key = $1',
          [journal.key],
        );
        seen.push(n);
        await ledger.insertJournals(manager, [journal], 'new');
      }),
    ).rejects.toThrow(/duplicate key value/);
    expect(seen).toEqual([1, 0, 2]);
    // The failed statement failed its transaction: nothing of it stayed.
    const [{ n }] = await h.dataSource.query(
      'SELECT count(*)::int AS n FROM billing.journals WHERE idempotency_key = $1',
      [journal.key],
    );
    expect(n).toBe(0);
  });

  it('proves the references no foreign key checks: an entry without its journal, a journal without its account', async () => {
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);
    const [orphan] = await h.dataSource.query(
      `INSERT INTO billing.usage_entries (journal_id, account_id, ledger, amount_cu, occurred_at)
       VALUES (999999999, 'acc_gone', 'usage', 5, now()), (999999999, 'acc_gone', 'allowance', -5, now()) RETURNING id`,
    );
    const [stray] = await h.dataSource.query(
      `INSERT INTO billing.ledger_journal (idempotency_key, account_id, kind, amount_cu, occurred_at)
       VALUES ('test:stray', 'acc_gone', 'topup_created', 5, now()) RETURNING id`,
    );
    try {
      const report = await checkLedger(h.dataSource);
      expect(report.orphanEntries).toEqual(
        expect.arrayContaining([{ entryId: orphan.id, journalId: '999999999' }]),
      );
      expect(report.orphanJournals).toEqual([{ journalId: stray.id, accountId: 'acc_gone' }]);
      expect(ledgerHolds(report)).toBe(false);
    } finally {
      await h.dataSource.query('DELETE FROM billing.usage_entries WHERE journal_id = 999999999');
      await h.dataSource.query('DELETE FROM billing.ledger_journal WHERE id = $1', [stray.id]);
    }
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);
  });
});
