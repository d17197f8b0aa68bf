import { Events } from '@meridian/contracts';
import { checkLedger, ledgerHolds } from './ledger-check';
import { LedgerTicker } from './ledger-ticker.service';
import { UsageJournalRetention } from './usage-journal-retention';
import {
  accountBalance,
  api,
  balanceAfter,
  BillingHarness,
  nodeFlush,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';

describe('usage journal retention: day partitions, summarised and dropped (real Postgres + NATS, fake clock)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start({ USAGE_JOURNAL_RETENTION_DAYS: '8' });
  });
  afterAll(() => h.teardown());

  /**
   * The ledger's periodic work at the clock's time: its ticker and the retention beside it, the
   * latter summing one journal a transaction, so a day is retired in several chunks.
   */
  const tick = async () => {
    await billing.app.get(LedgerTicker).tick();
    const retention = billing.app.get(UsageJournalRetention);
    await retention.ensurePartitions(h.clock.now());
    return retention.retire(h.clock.now(), 1);
  };

  const balance = (key: string) => accountBalance(billing.url, key);
  const applied = (key: string, publish: () => Promise<unknown>) =>
    balanceAfter(billing.url, key, publish);

  /** A Starter account made by the operator API: its id and API key. */
  async function newAccount(name: string): Promise<{ id: string; key: string }> {
    const created = await api<{ account: { id: string }; api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name, plan: 'starter' },
    );
    expect(created.status).toBe(201);
    return { id: created.body.account.id, key: created.body.api_key.key };
  }

  const partitions = async (): Promise<string[]> =>
    (
      (await h.dataSource.query(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'billing.usage_journal'::regclass ORDER BY c.relname`,
      )) as Array<{ name: string }>
    ).map((r) => r.name);

  /** The day partitions by state, as an operator's Prometheus scrapes them from /metrics. */
  async function daysGauge(): Promise<Record<string, number>> {
    const text = await (await fetch(`${billing.url}/metrics`)).text();
    return Object.fromEntries(
      [...text.matchAll(/^billing_usage_journal_days\{state="(\w+)"[^}]*\} (\S+)$/gm)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
  }

  const usageTotal = async (key: string): Promise<number> =>
    (
      await api<{ total_cu: number }>(
        billing.url,
        'GET',
        '/api/v1/account/usage?from=2026-03-01T00:00:00.000Z&to=2026-03-31T00:00:00.000Z',
        key,
      )
    ).body.total_cu;

  it('makes day partitions ahead, retires days past the retention into summaries that keep the sums and the proof, and summarises the default partition too', async () => {
    h.clock.set('2026-03-02T10:00:00.000Z');
    await tick();
    expect(await partitions()).toEqual([
      'usage_journal_default',
      'usage_journal_p20260302',
      'usage_journal_p20260303',
      'usage_journal_p20260304',
    ]);
    expect(await daysGauge()).toEqual({ ahead: 2, kept: 1, overdue: 0 });

    const { id, key } = await newAccount('retention');
    // A per-account event and a flush part (the two usage paths), on 03-02.
    await applied(key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(id, 1_000, '2026-03-02T10:00:00.000Z')),
    );
    await applied(key, () =>
      h.publisher.publish(
        Events.usageFlushedV2,
        nodeFlush([[id, 2_000]], 'gw-test', '2026-03-02T10:00:10.000Z'),
      ),
    );
    // A plan change at 12:00, then usage metered before it: charged to what Starter left
    // (ADR 0108), its take-back tagged with the period it is kept for.
    h.clock.set('2026-03-02T12:00:00.000Z');
    expect(
      (await api(billing.url, 'PUT', '/api/v1/account/plan', key, { plan: 'growth' })).status,
    ).toBe(200);
    await applied(key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(id, 500, '2026-03-02T11:59:58.000Z')),
    );
    expect(
      await h.dataSource.query(
        `SELECT count(*)::int AS n FROM billing.usage_journal_p20260302 WHERE account_id = $1`,
        [id],
      ),
    ).toEqual([{ n: 3 }]);

    // 03-20 has no partition yet: its usage goes to the default partition, and Postgres then
    // refuses that day's partition (the default holds its rows); the day goes on there. The
    // tick also retires 03-02 to 03-04, eight days old or more.
    h.clock.set('2026-03-20T12:00:00.000Z');
    await applied(key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(id, 200, '2026-03-20T12:00:00.000Z')),
    );
    const before = await balance(key);
    expect(await usageTotal(key)).toBe(3_700);
    // Before the hour's run: three days past the retention, none made ahead (what the storage
    // alerts watch).
    expect(await daysGauge()).toEqual({ ahead: 0, kept: 0, overdue: 3 });
    const retired = await tick();
    expect(retired.dropped).toEqual(['p20260302', 'p20260303', 'p20260304']);
    // How long a drop held the usage tables (lock asked → commit), what the log reports.
    expect(retired.heldMs).toBeGreaterThan(0);
    expect(await daysGauge()).toEqual({ ahead: 2, kept: 0, overdue: 0 });
    expect(await partitions()).toEqual([
      'usage_journal_default',
      'usage_journal_p20260321',
      'usage_journal_p20260322',
    ]);
    expect(await balance(key)).toEqual(before);
    expect(await usageTotal(key)).toBe(3_700);
    await applied(key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(id, 100, '2026-03-20T12:30:00.000Z')),
    );
    expect(
      await h.dataSource.query(
        `SELECT count(*)::int AS n FROM billing.usage_journal_default WHERE account_id = $1`,
        [id],
      ),
    ).toEqual([{ n: 2 }]);
    const kept = await balance(key);
    const usage = await usageTotal(key);
    expect(usage).toBe(3_800);

    // Nine days on: every day before 03-21 is retired, the default partition's 03-20 too. 03-21 stays (its whole day is not yet
    // eight days old), and the next days get their partitions.
    h.clock.set('2026-03-29T12:00:00.000Z');
    await tick();
    expect(await partitions()).toEqual([
      'usage_journal_default',
      'usage_journal_p20260321',
      'usage_journal_p20260322',
      'usage_journal_p20260329',
      'usage_journal_p20260330',
      'usage_journal_p20260331',
    ]);
    expect(
      await h.dataSource.query(
        `SELECT count(*)::int AS n FROM billing.usage_journal WHERE account_id = $1`,
        [id],
      ),
    ).toEqual([{ n: 0 }]);
    const summaries: Array<{ day: string; ledger: string; prior_of: Date | null; cu: string }> =
      await h.dataSource.query(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, ledger, prior_of, sum(amount_cu) AS cu
           FROM billing.usage_summaries WHERE account_id = $1 GROUP BY 1, 2, 3 ORDER BY 1, 2`,
        [id],
      );
    expect(
      summaries.map((s) => [s.day, s.ledger, s.prior_of?.toISOString() ?? null, Number(s.cu)]),
    ).toEqual([
      ['2026-03-02', 'allowance', null, -3_000],
      ['2026-03-02', 'allowance_expired', '2026-03-02T12:00:00.000Z', -500],
      ['2026-03-02', 'usage', null, 3_500],
      ['2026-03-20', 'allowance', null, -300],
      ['2026-03-20', 'usage', null, 300],
    ]);
    // Nothing of the chunks' bookkeeping is left once the days are dropped.
    expect(
      await h.dataSource.query(
        `SELECT (SELECT count(*) FROM billing.usage_summaries_pending)::int AS pending,
                (SELECT count(*) FROM billing.usage_retirements)::int AS progress`,
      ),
    ).toEqual([{ pending: 0, progress: 0 }]);
    // What the account has, what it used and the proof of both are as before.
    expect(await balance(key)).toEqual(kept);
    expect(await usageTotal(key)).toBe(usage);
    const report = await checkLedger(h.dataSource, [id]);
    expect(report.priorMismatches).toEqual([]);
    expect(ledgerHolds(report)).toBe(true);

    // The proof reads the summaries: one changed by 1 CU is found.
    await h.dataSource.query(
      `UPDATE billing.usage_summaries SET amount_cu = amount_cu + 1
        WHERE account_id = $1 AND day = '2026-03-20' AND ledger = 'usage'`,
      [id],
    );
    const tampered = await checkLedger(h.dataSource, [id]);
    expect(tampered.unbalancedJournals).toEqual([
      { journalId: `summary:${id}:2026-03-20`, sum: 1 },
    ]);
    expect(tampered.total).toBe(1);
    await h.dataSource.query(
      `UPDATE billing.usage_summaries SET amount_cu = amount_cu - 1
        WHERE account_id = $1 AND day = '2026-03-20' AND ledger = 'usage'`,
      [id],
    );
    // A prior-period take-back summarised under another period is found as well.
    await h.dataSource.query(
      `UPDATE billing.usage_summaries SET prior_of = prior_of + interval '1 day'
        WHERE account_id = $1 AND ledger = 'allowance_expired'`,
      [id],
    );
    expect((await checkLedger(h.dataSource, [id])).priorMismatches).toEqual([
      expect.objectContaining({ accountId: id }),
    ]);
    await h.dataSource.query(
      `UPDATE billing.usage_summaries SET prior_of = prior_of - interval '1 day'
        WHERE account_id = $1 AND ledger = 'allowance_expired'`,
      [id],
    );
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);

    // Usage of a kept day still lands in its partition after all this.
    await applied(key, () =>
      h.publisher.publish(Events.usageRecorded, nodeUsage(id, 40, '2026-03-29T11:00:00.000Z')),
    );
    expect(
      await h.dataSource.query(
        `SELECT count(*)::int AS n FROM billing.usage_journal_p20260329 WHERE account_id = $1`,
        [id],
      ),
    ).toEqual([{ n: 1 }]);
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);
  });

  it('resumes a day whose retirement stopped between chunks (a crash), and counts each journal once', async () => {
    // 03-29 to 03-31 exist from the case above; 03-30 is retired once the clock is past 04-07.
    h.clock.set('2026-03-30T12:00:00.000Z');
    const { id, key } = await newAccount('resumed');
    for (const [cu, at] of [
      [100, '2026-03-30T10:00:00.000Z'],
      [200, '2026-03-30T11:00:00.000Z'],
      [300, '2026-03-30T12:00:00.000Z'],
    ] as const)
      await applied(key, () => h.publisher.publish(Events.usageRecorded, nodeUsage(id, cu, at)));
    const ids = (
      (await h.dataSource.query(
        `SELECT id FROM billing.usage_journal_p20260330 WHERE account_id = $1 ORDER BY id`,
        [id],
      )) as Array<{ id: string }>
    ).map((r) => r.id);
    expect(ids).toHaveLength(3);
    // What a run that committed the first journal's chunk and then died leaves behind.
    await h.dataSource.query(
      `INSERT INTO billing.usage_summaries_pending (day, account_id, ledger, prior_of, amount_cu, entries)
       VALUES ('2026-03-30', $1, 'allowance', NULL, -100, 1), ('2026-03-30', $1, 'usage', NULL, 100, 1)`,
      [id],
    );
    await h.dataSource.query(
      `INSERT INTO billing.usage_retirements (day, next_journal_id) VALUES ('2026-03-30', $1)`,
      [Number(ids[0]) + 1],
    );
    // The pending sums stay out of the proof until the day is dropped.
    expect(ledgerHolds(await checkLedger(h.dataSource, [id]))).toBe(true);

    h.clock.set('2026-04-08T12:00:00.000Z');
    await billing.app.get(UsageJournalRetention).retire(h.clock.now(), 1);
    expect(
      await h.dataSource.query(
        `SELECT ledger, sum(amount_cu)::int AS cu FROM billing.usage_summaries
          WHERE account_id = $1 GROUP BY ledger ORDER BY ledger`,
        [id],
      ),
    ).toEqual([
      { ledger: 'allowance', cu: -600 },
      { ledger: 'usage', cu: 600 },
    ]);
    expect(await usageTotal(key)).toBe(600);
    expect(ledgerHolds(await checkLedger(h.dataSource))).toBe(true);
  });
});
