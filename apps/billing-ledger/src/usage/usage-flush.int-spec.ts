import {
  DeadLetterSchema,
  Events,
  KvBuckets,
  USAGE_PART_RETENTION_MS,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { FakeClockTimers } from '@meridian/platform-db/testing';
import { storedMessages } from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { checkLedger } from '../ledger/ledger-check';
import { LedgerTicker } from '../ledger/ledger-ticker.service';
import { LedgerRepository } from '../ledger/ledger.repository';
import { LedgerService } from '../ledger/ledger.service';
import {
  api,
  BillingHarness,
  bulkAccounts,
  eventually,
  nodeFlush,
  nodeFlushV1,
  type BillingApp,
} from '../testing/billing-harness';
import { flushDelivery } from '../testing/fixtures';
import { aggregateFlushes } from './flush-aggregate';
import { FlushPipeline } from './flush-pipeline';
import { UsageConsumer } from './usage.consumer';

describe('billing-ledger usage flushes (ADR 0104; real Postgres + NATS)', () => {
  const h = new BillingHarness();
  const running: BillingApp[] = [];

  beforeAll(() => h.setup());
  // A failed case must not leave its app consuming the next case's messages.
  afterEach(async () => {
    for (const billing of running.splice(0)) await billing.app.close().catch(() => undefined);
  });
  afterAll(() => h.teardown());

  async function start(
    overrides: Record<string, string> = {},
    options: Parameters<BillingHarness['start']>[1] = {},
  ): Promise<BillingApp> {
    const billing = await h.start(overrides, options);
    running.push(billing);
    return billing;
  }

  async function newAccounts(billing: BillingApp, count: number, plan = 'starter') {
    const created = await bulkAccounts(billing.url, count, 'flush', plan);
    for (const { id, key } of created) keys.set(id, key);
    return created.map((a) => a.id);
  }
  const keys = new Map<string, string>();

  /** Every journal of `accountIds` balances and their running sums equal their entries. */
  async function expectLedgerHolds(accountIds: readonly string[]): Promise<void> {
    const report = await checkLedger(h.dataSource, accountIds);
    expect(report.unbalancedJournals).toEqual([]);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
  }

  const usedCu = async (accountIds: readonly string[]): Promise<Map<string, number>> => {
    const rows: Array<{ account_id: string; cu: string }> = await h.dataSource.query(
      `SELECT account_id, sum(amount_cu) AS cu FROM billing.entries
        WHERE account_id = ANY($1::text[]) AND ledger = 'usage' GROUP BY account_id`,
      [accountIds],
    );
    return new Map(rows.map((r) => [r.account_id, Number(r.cu)]));
  };

  const usageJournals = async (accountId: string): Promise<number> => {
    const [row] = await h.dataSource.query(
      `SELECT count(*) AS n FROM billing.journals WHERE account_id = $1 AND kind = 'usage'`,
      [accountId],
    );
    return Number(row.n);
  };

  async function deadLetters() {
    const stored = await storedMessages(await jetstreamManager(h.nc), `${h.prefix}_BILLING`);
    return stored
      .filter(
        (m) => m.subject === `${h.prefix}.billing.message.dead-lettered.v1.billing-ledger-usage`,
      )
      .map((m) => DeadLetterSchema.parse(m.json()));
  }

  const metric = async (billing: BillingApp, line: RegExp): Promise<number> => {
    const text = await (await fetch(`${billing.url}/metrics`)).text();
    const found = text.split('\n').find((l) => line.test(l));
    return found ? Number(found.split(' ').at(-1)) : 0;
  };

  it('applies a flush part redelivered 3 times exactly once: one journal per account, rollups and balance state', async () => {
    const billing = await start();
    const [a, b, c] = await newAccounts(billing, 3);
    const flush = nodeFlush([
      [a!, 1_240],
      [b!, 20],
      [c!, 400],
    ]);
    for (const copy of ['a', 'b', 'c'])
      await h.publisher.publishJson(
        Events.usageFlushedV2.subjectOf(flush),
        flush,
        `${flush.id}#${copy}`,
      );
    // A fourth copy whose first two deliveries fail after the commit (lost acks, a crash).
    let failures = 0;
    const consumer = billing.app.get(UsageConsumer);
    consumer.afterApply = async (applied) => {
      if (applied.id === flush.id && failures < 2) {
        failures += 1;
        throw new Error('simulated crash before ack');
      }
    };
    await h.publisher.publishJson(Events.usageFlushedV2.subjectOf(flush), flush, `${flush.id}#d`);
    await eventually(async () => failures === 2 && (await h.usageDrained()), 15_000, 'drained');
    consumer.afterApply = undefined;

    expect(await usedCu([a!, b!, c!])).toEqual(
      new Map([
        [a!, 1_240],
        [b!, 20],
        [c!, 400],
      ]),
    );
    for (const id of [a!, b!, c!]) expect(await usageJournals(id)).toBe(1);
    const key = keys.get(a!)!;
    const usage = await api<{ total_cu: number; total_calls: number }>(
      billing.url,
      'GET',
      '/api/v1/account/usage?group_by=method&from=2026-01-05T00:00:00Z&to=2026-01-06T00:00:00Z',
      key,
    );
    expect(usage.body).toMatchObject({ total_cu: 1_240, total_calls: 62 });
    const [balance] = await h.dataSource.query(
      'SELECT allowance_cu, allowance_total_cu FROM billing.balances WHERE account_id = $1',
      [a!],
    );
    expect(Number(balance.allowance_total_cu) - Number(balance.allowance_cu)).toBe(1_240);
    await eventually(
      async () =>
        (await h.kvJson<{ allowanceCu: number }>(KvBuckets.balanceState.name, a!))?.allowanceCu ===
        Number(balance.allowance_cu),
      10_000,
      'balance state in KV',
    );
    expect(await metric(billing, /^billing_usage_messages_total\{.*outcome="duplicate"/)).toBe(5);
    await expectLedgerHolds([a!, b!, c!]);
  });

  it('applies new parts batched with a copy of an older applied part (the copy adds nothing, the batch does not fail)', async () => {
    const billing = await start();
    const [a, b] = await newAccounts(billing, 2);
    const ledger = billing.app.get(LedgerService);
    const older = nodeFlush([
      [a!, 100],
      [b!, 20],
    ]);
    const newer = nodeFlush([
      [a!, 40],
      [b!, 60],
    ]);
    expect(older.id < newer.id).toBe(true);
    expect((await ledger.applyFlushes([flushDelivery(older)])).outcomes[0]!.status).toBe('applied');
    // The copy's id is the smaller one; the first version keyed the batch's journals by it and
    // so repeated the first batch's keys: ledger_conflict on every redelivery.
    const second = await ledger.applyFlushes([flushDelivery(older), flushDelivery(newer)]);
    expect(second.outcomes.map((o) => o.status)).toEqual(['duplicate', 'applied']);
    expect(await usedCu([a!, b!])).toEqual(
      new Map([
        [a!, 140],
        [b!, 80],
      ]),
    );
    await expectLedgerHolds([a!, b!]);
  });

  it('sums again when a part of a batch summed ahead of its transaction was applied already (the prepared sum would count it twice)', async () => {
    const billing = await start();
    const [a, b] = await newAccounts(billing, 2);
    const ledger = billing.app.get(LedgerService);
    const older = nodeFlush([
      [a!, 100],
      [b!, 20],
    ]);
    const newer = nodeFlush([[a!, 40]]);
    expect((await ledger.applyFlushes([flushDelivery(older)])).outcomes[0]!.status).toBe('applied');
    // The consumer sums a batch while the previous transaction runs, before the claim says
    // which parts are new: here the redelivered `older` is in that sum.
    const prepared = aggregateFlushes([older, newer]);
    const second = await ledger.applyFlushes(
      [flushDelivery(older), flushDelivery(newer)],
      prepared,
    );
    expect(second.outcomes.map((o) => o.status)).toEqual(['duplicate', 'applied']);
    expect(second.items).toBe(1);
    expect(await usedCu([a!, b!])).toEqual(
      new Map([
        [a!, 140],
        [b!, 20],
      ]),
    );
    await expectLedgerHolds([a!, b!]);
  });

  it('takes a row from the balance cache only at the version it committed: a change by another replica is read (ADR 0106)', async () => {
    const one = await start();
    const two = await start();
    const [a, b] = await newAccounts(one, 2);
    const cache = one.app.get(LedgerRepository).cache;
    const apply = (billing: BillingApp, flush: UsageFlushedV2) =>
      billing.app.get(LedgerService).applyFlushes([flushDelivery(flush)]);

    await apply(
      one,
      nodeFlush([
        [a!, 100],
        [b!, 20],
      ]),
    ); // first read: both miss, then cached
    const before = { hits: cache.hits, misses: cache.misses };
    await apply(
      one,
      nodeFlush([
        [a!, 40],
        [b!, 20],
      ]),
    );
    expect({ hits: cache.hits - before.hits, misses: cache.misses - before.misses }).toEqual({
      hits: 2,
      misses: 0,
    });
    // The other replica charges `a`: replica one's cached row of `a` is now a version behind.
    await apply(two, nodeFlush([[a!, 1_000]]));
    const again = { hits: cache.hits, misses: cache.misses };
    await apply(
      one,
      nodeFlush([
        [a!, 60],
        [b!, 20],
      ]),
    );
    expect({ hits: cache.hits - again.hits, misses: cache.misses - again.misses }).toEqual({
      hits: 1,
      misses: 1,
    });
    // What an operator sees of it: the same counts at /metrics.
    expect([
      await metric(one, /^billing_balance_cache_lookups_total\{outcome="hit"/),
      await metric(one, /^billing_balance_cache_lookups_total\{outcome="miss"/),
      await metric(one, /^billing_balance_cache_rows/),
    ]).toEqual([cache.hits, cache.misses, cache.size]);
    const rows = await one.app.get(LedgerRepository).findMany([a!, b!]);
    const allowance = rows[0]!.allowanceTotal;
    expect(new Map(rows.map((r) => [r.accountId, allowance - r.allowance]))).toEqual(
      new Map([
        [a!, 1_200],
        [b!, 60],
      ]),
    );
    await expectLedgerHolds([a!, b!]);
  });

  it('keeps the balance cache as it was when a transaction that saved rows rolls back', async () => {
    const billing = await start();
    const [a] = await newAccounts(billing, 1);
    const ledger = billing.app.get(LedgerRepository);
    await billing.app.get(LedgerService).applyFlushes([flushDelivery(nodeFlush([[a!, 100]]))]);
    const committed = (await ledger.find(a!))!;
    await expect(
      ledger.transaction(async (manager) => {
        const row = (await ledger.lock(manager, [a!])).get(a!)!;
        row.allowance -= 5;
        row.version += 1;
        await ledger.saveBalances(manager, [row], new Date());
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // The version the rolled-back transaction saved was never committed: nothing cached under it…
    expect(ledger.cache.take(a!, committed.version + 1)).toBeUndefined();
    // …and the committed one is still what the cache answers.
    expect(ledger.cache.take(a!, committed.version)?.allowance).toBe(committed.allowance);
  });

  it('sums parts from several producers into one journal per account per transaction, to the CU', async () => {
    const billing = await start();
    const ids = await newAccounts(billing, 50);
    const expected = new Map<string, number>();
    const parts: UsageFlushedV2[] = [];
    for (let w = 0; w < 10; w++)
      for (const producer of ['gw-eu-1', 'gw-us-1', 'dw-1']) {
        const accounts = ids.map((id, i) => [id, 20 * ((i + w) % 7) + 20] as const);
        for (const [id, cu] of accounts) expected.set(id, (expected.get(id) ?? 0) + cu);
        parts.push(nodeFlush(accounts, producer));
      }
    await Promise.all(parts.map((p) => h.publisher.publish(Events.usageFlushedV2, p)));
    await eventually(() => h.usageDrained(), 20_000, 'drained');
    await eventually(async () => (await usedCu(ids)).size === ids.length, 5_000, 'applied');
    expect(await usedCu(ids)).toEqual(expected);
    // Fewer journals than parts: parts applied together share one journal per account.
    const [{ n }] = await h.dataSource.query(
      `SELECT count(DISTINCT batch) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])`,
      [parts.map((p) => p.id)],
    );
    expect(await usageJournals(ids[0]!)).toBe(Number(n));
    expect(Number(n)).toBeLessThan(parts.length);
    await expectLedgerHolds(ids);
  });

  it("charges a batch whose parts lie on both sides of a period's start to both periods, each account to the CU (ADR 0108)", async () => {
    const billing = await start();
    const [a, b, c] = await newAccounts(billing, 3, 'free');
    const ledger = billing.app.get(LedgerService);
    const allowances = async () =>
      Promise.all(
        [a!, b!, c!].map(async (id) => {
          const body = (
            await api<{ allowance_cu: number; purchased_cu: number }>(
              billing.url,
              'GET',
              '/api/v1/account/balance',
              keys.get(id)!,
            )
          ).body;
          return [body.allowance_cu, body.purchased_cu];
        }),
      );
    try {
      // The day before: a spends 10,000 of its 50,000.
      await ledger.applyFlushes([
        flushDelivery(nodeFlush([[a!, 10_000]], 'gw-eu-1', '2026-01-05T10:00:00.000Z')),
      ]);
      // Half a second after 07:30, before any tick: the batch rolls the period itself. Its parts
      // from before 07:30 are the prior day's, those after it today's; c has only today's and b
      // only the prior day's.
      h.clock.set('2026-01-06T07:30:00.500Z');
      const batch = [
        nodeFlush(
          [
            [a!, 300],
            [b!, 100],
          ],
          'gw-eu-1',
          '2026-01-06T07:29:00.000Z',
        ),
        nodeFlush(
          [
            [a!, 200],
            [c!, 70],
          ],
          'gw-us-1',
          '2026-01-06T07:30:00.000Z',
        ),
        nodeFlush([[a!, 40]], 'gw-us-1', '2026-01-06T07:29:30.000Z'),
      ];
      const result = await ledger.applyFlushes(batch.map((f) => flushDelivery(f)));
      expect(result.outcomes.map((o) => o.status)).toEqual(['applied', 'applied', 'applied']);
      expect(await allowances()).toEqual([
        [49_800, 0],
        [50_000, 0],
        [49_930, 0],
      ]);
      expect(await usedCu([a!, b!, c!])).toEqual(
        new Map([
          [a!, 10_540],
          [b!, 100],
          [c!, 70],
        ]),
      );
      const priors: Array<{ account_id: string; prior: string }> = await h.dataSource.query(
        `SELECT account_id, prior_allowance_cu AS prior FROM billing.balances
          WHERE account_id = ANY($1::text[])`,
        [[a!, b!, c!]],
      );
      expect(new Map(priors.map((r) => [r.account_id, Number(r.prior)]))).toEqual(
        new Map([
          [a!, 50_000 - 10_000 - 340],
          [b!, 50_000 - 100],
          [c!, 50_000],
        ]),
      );
      await expectLedgerHolds([a!, b!, c!]);
    } finally {
      h.clock.set('2026-01-05T10:00:00.000Z');
    }
  });

  it("charges a batch straddling a change to Free at the change, not Free's 07:30 window start, and counts the late part in the chain (ADR 0109)", async () => {
    const billing = await start();
    const [a] = await newAccounts(billing, 1, 'starter');
    const ledger = billing.app.get(LedgerService);
    const balance = async () =>
      (
        await api<{ allowance_cu: number; purchased_cu: number; overdraft_cu: number }>(
          billing.url,
          'GET',
          '/api/v1/account/balance',
          keys.get(a!)!,
        )
      ).body;
    const setPlan = async (plan: string) =>
      expect(
        (await api(billing.url, 'PUT', '/api/v1/account/plan', keys.get(a!)!, { plan })).status,
      ).toBe(200);
    try {
      h.clock.set('2026-04-02T10:00:00.000Z');
      // The account was opened at the clock of an earlier case: a change starts its period now.
      await setPlan('growth');
      await setPlan('starter');
      await ledger.applyFlushes([
        flushDelivery(nodeFlush([[a!, 3_000_000]], 'gw-eu-1', '2026-04-02T10:00:00.000Z')),
      ]);
      h.clock.set('2026-04-02T11:00:00.000Z');
      await setPlan('free');
      expect(await balance()).toMatchObject({ allowance_cu: 0, purchased_cu: 0 });
      // One batch: 500 CU metered on Starter before 11:00 (late: Starter's remainder pays),
      // 100 CU after it (Free's allowance, none: an overdraft).
      h.clock.set('2026-04-02T11:00:00.500Z');
      await ledger.applyFlushes(
        [
          nodeFlush([[a!, 500]], 'gw-eu-1', '2026-04-02T10:59:58.000Z'),
          nodeFlush([[a!, 100]], 'gw-us-1', '2026-04-02T11:00:00.000Z'),
        ].map((f) => flushDelivery(f)),
      );
      expect(await balance()).toMatchObject({
        allowance_cu: 0,
        purchased_cu: 0,
        overdraft_cu: 100,
      });
      h.clock.set('2026-04-02T11:30:00.000Z');
      await setPlan('starter');
      // The grant pays the 100 CU debt first (ADR 0101 amendment).
      expect(await balance()).toMatchObject({
        allowance_cu: 90_000_000 - 3_000_500 - 100,
        overdraft_cu: 0,
      });
      await expectLedgerHolds([a!]);
    } finally {
      h.clock.set('2026-01-05T10:00:00.000Z');
    }
  });

  it('applies v1 parts of a producer not yet upgraded beside compact ones, each exactly once (ADR 0105)', async () => {
    const billing = await start();
    const [a, b] = await newAccounts(billing, 2);
    const old = nodeFlushV1(
      [
        [a!, 100],
        [b!, 40],
      ],
      'gw-old',
    );
    const compact = nodeFlush([[a!, 60]], 'gw-new');
    await h.publisher.publish(Events.usageFlushed, old);
    await h.publisher.publish(Events.usageFlushedV2, compact);
    // A v1 redelivery under a new message id: the ledger's record of applied ids stops it.
    await h.publisher.publishJson(Events.usageFlushed.subjectOf(old), old, `${old.id}#again`);
    await eventually(() => h.usageDrained(), 10_000, 'drained');
    expect(await usedCu([a!, b!])).toEqual(
      new Map([
        [a!, 160],
        [b!, 40],
      ]),
    );
    expect(await metric(billing, /^billing_usage_messages_total\{.*outcome="duplicate"/)).toBe(1);
  });

  it('parks the entries of an unknown account on the dead-letter subject and applies the rest', async () => {
    const billing = await start();
    const [known] = await newAccounts(billing, 1);
    const flush = nodeFlush([
      [known!, 200],
      ['acc_unknown_to_ledger', 60],
    ]);
    await h.publisher.publish(Events.usageFlushedV2, flush);
    await eventually(() => h.usageDrained(), 10_000, 'drained');
    expect(await usedCu([known!])).toEqual(new Map([[known!, 200]]));
    const letter = await eventually(
      async () => (await deadLetters()).find((l) => l.msgId?.startsWith(flush.id)),
      10_000,
      'dead letter',
    );
    expect(letter).toMatchObject({
      reason: 'permanent_error',
      error: { code: 'unknown_account' },
      subject: 'billing.usage.recorded.v1.acc_unknown_to_ledger',
    });
    // What was parked is a valid usage event of that account alone, ready to re-publish.
    expect(Events.usageRecorded.schema.parse(JSON.parse(letter.data))).toMatchObject({
      accountId: 'acc_unknown_to_ledger',
      totalCu: 60,
    });
    const parked = await h.dataSource.query(
      'SELECT account_id FROM billing.usage_parked WHERE flush_id = $1',
      [flush.id],
    );
    expect(parked).toEqual([{ account_id: 'acc_unknown_to_ledger' }]);
    expect(await metric(billing, /^billing_usage_parked_total/)).toBe(1);
  });

  it('dead-letters a flush failing its schema with the reason, counts it, and keeps consuming', async () => {
    const billing = await start();
    const [id] = await newAccounts(billing, 1);
    const bad = nodeFlush([[id!, 100]]);
    bad.totalCu = 99; // not the sum of its rows
    await h.publisher.publishJson(Events.usageFlushedV2.subjectOf(bad), bad, bad.id);
    const good = nodeFlush([[id!, 40]]);
    await h.publisher.publish(Events.usageFlushedV2, good);
    await eventually(() => h.usageDrained(), 10_000, 'drained');
    expect(await usedCu([id!])).toEqual(new Map([[id!, 40]]));
    const letter = (await deadLetters()).find((l) => l.msgId === bad.id);
    expect(letter?.reason).toBe('invalid_payload');
    expect(letter?.error.message).toMatch(/totalCu/);
    // Counted under the durable of the part's usage partition (ADR 0107).
    const durable = `billing-ledger-usage-p${bad.ledgerPartition ?? 0}of8`;
    expect(
      await metric(
        billing,
        new RegExp(
          `^messaging_dead_lettered_total\\{.*consumer="${durable}".*reason="invalid_payload"`,
        ),
      ),
    ).toBe(1);
  });

  it('isolates a part Postgres cannot store: the parts of its batch commit, it alone is refused', async () => {
    const billing = await start();
    const ids = await newAccounts(billing, 3);
    const ledger = billing.app.get(LedgerService);
    // The consumer's pipeline over the real ledger; the part is handed over as if it had passed
    // its schema (the schema refuses this one since: no year 0 in Postgres).
    const pipeline = new FlushPipeline(
      async (deliveries, aggregate) => (await ledger.applyFlushes(deliveries, aggregate)).outcomes,
    );
    const good = ids.map((id, i) => nodeFlush([[id, 10 * (i + 1)]]));
    const bad = nodeFlush([[ids[0]!, 7]], 'gw-test', '0000-01-01T00:00:00.000Z');
    const results = await Promise.allSettled(
      [good[0]!, bad, good[1]!, good[2]!].map((f) => pipeline.submit(flushDelivery(f), f)),
    );
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      code: 'unappliable_usage',
      retryable: false,
      message: expect.stringMatching(/out of range/),
    });
    expect(await usedCu(ids)).toEqual(
      new Map([
        [ids[0]!, 10],
        [ids[1]!, 20],
        [ids[2]!, 30],
      ]),
    );
    await expectLedgerHolds(ids);
  });

  it("publishes an ok → exhausted flip at once, not at the end of the throttle's interval", async () => {
    // The publisher's usage passes on held timers: the end of an interval never comes, so the
    // exhausted state can only go out by the flip's own pass (PassThrottle.runNow).
    const timers = new FakeClockTimers();
    const billing = await start(
      { STATE_PUBLISH_DELAY_MS: '2000' },
      { statePassTimers: { now: () => timers.clock.now().getTime(), timer: timers.timer } },
    );
    const [id] = await newAccounts(billing, 1, 'free');
    const state = () =>
      h.kvJson<{ state: string; allowanceCu: number }>(KvBuckets.balanceState.name, id!);
    // A charge that flips nothing: the first pass after a quiet interval, at once.
    await h.publisher.publish(Events.usageFlushedV2, nodeFlush([[id!, 1_000]]));
    await eventually(
      async () => (await state())?.allowanceCu === 49_000,
      10_000,
      'first usage state in KV',
    );
    expect((await state())?.state).toBe('ok');
    // Within that interval (the held clock never leaves it), a charge that exhausts Free.
    await h.publisher.publish(Events.usageFlushedV2, nodeFlush([[id!, 49_000]]));
    await eventually(
      async () => (await state())?.state === 'exhausted',
      10_000,
      'exhausted state in KV',
    );
    expect(timers.armed).toBe(0);
  });

  it('kill -9 of the ledger mid-stream loses nothing and applies nothing twice, to the CU', async () => {
    const setup = await start();
    const ids = await newAccounts(setup, 20);
    // Only the ledger processes below consume.
    await setup.app.close();
    const expected = new Map<string, number>();
    const parts: UsageFlushedV2[] = [];
    for (let w = 0; w < 600; w++)
      for (const producer of ['gw-a', 'gw-b', 'dw-c']) {
        const accounts = ids.map((id, i) => [id, 20 * ((i * 3 + w) % 11) + 20] as const);
        for (const [id, cu] of accounts) expected.set(id, (expected.get(id) ?? 0) + cu);
        parts.push(nodeFlush(accounts, producer));
      }
    const partIds = parts.map((p) => p.id);
    const appliedParts = async (): Promise<number> => {
      const [{ n }] = await h.dataSource.query(
        'SELECT count(*) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])',
        [partIds],
      );
      return Number(n);
    };

    const publish = async (some: readonly UsageFlushedV2[]) => {
      for (let i = 0; i < some.length; i += 100)
        await Promise.all(
          some.slice(i, i + 100).map((part) => h.publisher.publish(Events.usageFlushedV2, part)),
        );
    };
    // Half of the parts are in the stream first, so the process is busy applying when it dies;
    // the other half comes after the kill, so however late it lands (on a quiet machine the
    // ledger may have applied all of a first batch) the restarted ledger has parts to apply.
    const half = parts.length / 2;
    await publish(parts.slice(0, half));
    const first = await h.ledgerProcess();
    await eventually(async () => (await appliedParts()) >= 100, 60_000, 'some parts applied');
    first.kill('SIGKILL');
    await first.exited();
    const atKill = await appliedParts();
    await publish(parts.slice(half));
    expect(atKill).toBeGreaterThanOrEqual(100);
    expect(atKill).toBeLessThan(parts.length);

    const second = await h.ledgerProcess();
    try {
      await eventually(
        async () => (await appliedParts()) === parts.length && (await h.usageDrained()),
        90_000,
        'every part applied after the restart',
      );
      expect(await usedCu(ids)).toEqual(expected);
      const report = await checkLedger(h.dataSource, ids);
      expect(report.unbalancedJournals).toEqual([]);
      expect(report.balanceMismatches).toEqual([]);
      expect(report.priorMismatches).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 240_000);

  it('forgets an applied part once the stream can no longer deliver it again, not before (USAGE_PART_RETENTION_MS)', async () => {
    const billing = await start();
    const [a] = await newAccounts(billing, 1);
    const ledger = billing.app.get(LedgerService);
    const remembered = async (ids: readonly string[]): Promise<string[]> =>
      (
        (await h.dataSource.query(
          'SELECT id FROM billing.usage_flushes WHERE id = ANY($1::text[]) ORDER BY applied_at',
          [ids],
        )) as Array<{ id: string }>
      ).map((r) => r.id);
    const appliedAt = Date.parse('2026-03-01T00:00:00.000Z');
    h.clock.set(appliedAt);
    const old = nodeFlush([[a!, 20]], 'gw-retention', '2026-02-28T23:59:58.000Z');
    await ledger.applyFlushes([flushDelivery(old)]);
    h.clock.set(appliedAt + USAGE_PART_RETENTION_MS - 1_000);
    const recent = nodeFlush([[a!, 40]], 'gw-retention', '2026-03-08T23:59:58.000Z');
    await ledger.applyFlushes([flushDelivery(recent)]);
    const tick = () => billing.app.get(LedgerTicker).tick();

    // The stream (7 days) could still hold it: a redelivery must find it applied.
    h.clock.set(appliedAt + USAGE_PART_RETENTION_MS);
    await tick();
    expect(await remembered([old.id, recent.id])).toEqual([old.id, recent.id]);
    await ledger.applyFlushes([flushDelivery(old)]);
    expect(await usedCu([a!])).toEqual(new Map([[a!, 60]]));

    h.clock.advance(1);
    await tick();
    expect(await remembered([old.id, recent.id])).toEqual([recent.id]);
    // Only the record of the id goes: the usage, its journals and the rollups stay.
    expect(await usedCu([a!])).toEqual(new Map([[a!, 60]]));
    expect(await usageJournals(a!)).toBe(2);
    await expectLedgerHolds([a!]);
  });
});
