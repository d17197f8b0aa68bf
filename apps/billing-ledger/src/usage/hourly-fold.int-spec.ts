import type { UsageFlushedV2 } from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { LedgerService } from '../ledger/ledger.service';
import {
  api,
  BillingHarness,
  bulkAccounts,
  nodeFlush,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { flushPart } from './flush-aggregate';
import { HourlyFolder } from './hourly-folder.service';
import { HOURLY_SHARDS, hourlyShardOf, UsageFlushesRepository } from './usage-flushes.repository';

/**
 * Hourly usage is recorded by the usage transaction as one row of arrays per account shard and
 * folded into `usage_hourly` later (ADR 0104): the usage API stays exact, every recorded row is
 * added exactly once however many folds run at once, and the timer folds one shard at a time.
 */
describe('billing-ledger hourly usage folding (real Postgres)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    // The fold timer off: only reads (and the test) fold.
    billing = await h.start({ USAGE_FOLD_MS: '0' });
  });
  afterAll(() => h.teardown());

  const newAccounts = async (count: number): Promise<string[]> =>
    (await bulkAccounts(billing.url, count, 'fold')).map((a) => a.id);

  const apply = (flush: UsageFlushedV2) =>
    billing.app
      .get(LedgerService)
      .applyFlushes([{ part: flushPart(flush), streamSequence: 1, deliveryCount: 1 }]);

  const count = async (table: string): Promise<number> =>
    Number((await h.dataSource.query(`SELECT count(*) AS n FROM billing.${table}`))[0].n);

  /** Recorded rows a transaction charging these accounts writes: one per shard among them. */
  const rowsFor = (accountIds: readonly string[]) => new Set(accountIds.map(hourlyShardOf)).size;

  const hourly = async (accountIds: readonly string[]): Promise<Map<string, number>> => {
    const rows: Array<{ account_id: string; cu: string }> = await h.dataSource.query(
      `SELECT account_id, sum(cu) AS cu FROM billing.usage_hourly WHERE account_id = ANY($1) GROUP BY 1`,
      [accountIds],
    );
    return new Map(rows.map((r) => [r.account_id, Number(r.cu)]));
  };

  /** The operator's usage read of one account on the test day (the harness clock's). */
  const usageOf = <T>(accountId: string, query = '') =>
    api<T>(
      billing.url,
      'GET',
      `/api/v1/admin/accounts/${accountId}/usage?from=2026-01-05T00:00:00Z&to=2026-01-06T00:00:00Z${query}`,
      OPERATOR_TOKEN,
    );

  it('records a transaction as a row per account shard; the usage API folds first and answers every charge', async () => {
    const [a, b] = await newAccounts(2);
    await apply(
      nodeFlush([
        [a!, 100],
        [b!, 20],
      ]),
    );
    await apply(nodeFlush([[a!, 40]]));
    // Two transactions: a row per shard of each, nothing in the rollups yet.
    expect(await count('usage_hourly_pending')).toBe(rowsFor([a!, b!]) + 1);
    expect(await hourly([a!, b!])).toEqual(new Map());

    const usage = await usageOf<{ items: Array<Record<string, unknown>>; total_cu: number }>(
      a!,
      '&group_by=method',
    );
    expect(usage.status).toBe(200);
    expect(usage.body.items).toEqual([
      { network: 'eth-mainnet', method: 'eth_blockNumber', calls: 7, cu: 140 },
    ]);
    expect(usage.body.total_cu).toBe(140);
    expect(await count('usage_hourly_pending')).toBe(0);
    expect(await hourly([a!, b!])).toEqual(
      new Map([
        [a!, 140],
        [b!, 20],
      ]),
    );
  });

  it('adds each recorded row once when folds run at once (two replicas and a read)', async () => {
    const accounts = await newAccounts(20);
    const expected = new Map<string, number>();
    let recorded = 0;
    for (let t = 0; t < 40; t++) {
      const charged = accounts
        .filter((_, i) => (i + t) % 3 !== 0)
        .map((id, i) => {
          const cu = 20 * (1 + ((i + t) % 4));
          expected.set(id, (expected.get(id) ?? 0) + cu);
          return [id, cu] as const;
        });
      await apply(nodeFlush(charged));
      recorded += rowsFor(charged.map(([id]) => id));
    }
    expect(await count('usage_hourly_pending')).toBe(recorded);

    // Folds of different sizes on their own connections, as replicas would run them (two of the
    // same shard at once, one of another), and the read path's fold of every shard: each waits
    // for the rows another has taken and skips what it deleted.
    const repository = billing.app.get(UsageFlushesRepository);
    const shard = hourlyShardOf(accounts[0]!);
    const other = (shard + 1) % HOURLY_SHARDS;
    const folded = await Promise.all([
      repository.foldHourly(shard, 3),
      repository.foldHourly(shard, 32),
      repository.foldHourly(other, 7),
      billing.app
        .get(HourlyFolder)
        .fold()
        .then(() => 0),
    ]);
    await billing.app.get(HourlyFolder).fold();
    expect(await count('usage_hourly_pending')).toBe(0);
    expect(folded.reduce((s, n) => s + n, 0)).toBeLessThanOrEqual(recorded);
    expect(await hourly(accounts)).toEqual(expected);
  });

  it("the timer's steps fold one shard each, in turn, and every shard within HOURLY_SHARDS steps", async () => {
    const accounts = await newAccounts(40);
    const folder = billing.app.get(HourlyFolder);
    await folder.fold();
    await apply(nodeFlush(accounts.map((id) => [id, 20] as const)));
    const shards = [...new Set(accounts.map(hourlyShardOf))].sort((x, y) => x - y);
    // 40 accounts fall into more than one of the 8 shards (FNV-1a of their ids).
    expect(shards.length).toBeGreaterThan(1);
    const pendingShards = async () =>
      (
        (await h.dataSource.query(
          `SELECT DISTINCT shard FROM billing.usage_hourly_pending ORDER BY shard`,
        )) as Array<{ shard: number }>
      ).map((r) => r.shard);
    expect(await pendingShards()).toEqual(shards);

    const folded: number[] = [];
    for (let step = 0; step < HOURLY_SHARDS; step++) {
      const before = await pendingShards();
      await folder.foldStep();
      const after = await pendingShards();
      // One step folds at most one shard, and never touches the others.
      const gone = before.filter((s) => !after.includes(s));
      expect(gone.length).toBeLessThanOrEqual(1);
      expect(after.every((s) => before.includes(s))).toBe(true);
      folded.push(...gone);
    }
    expect(await pendingShards()).toEqual([]);
    // In turn: the shards went in ascending order (the steps started at some shard and wrapped).
    const rotation = folded.indexOf(Math.min(...folded));
    expect([...folded.slice(rotation), ...folded.slice(0, rotation)]).toEqual(shards);
    expect(await hourly(accounts)).toEqual(new Map(accounts.map((id) => [id, 20])));
  });

  it('a timer step leaves a shard whose oldest row waited less than half the interval (another replica folded it lately) and folds it once it has', async () => {
    const accounts = await newAccounts(40);
    await billing.app.get(HourlyFolder).fold();
    // A second replica's folder with a 60 s interval, its timer not started: the test steps it.
    const config = billing.app.get<symbol, AppConfig>(APP_CONFIG);
    const folder = new HourlyFolder(
      billing.app.get(UsageFlushesRepository),
      { ...config, USAGE_FOLD_MS: 60_000 },
      billing.app.get<symbol, Logger>(LOGGER),
      h.clock,
      billing.app.get(DbJobGate),
    );
    await apply(nodeFlush(accounts.map((id) => [id, 20] as const)));
    const recorded = await count('usage_hourly_pending');
    expect(recorded).toBe(rowsFor(accounts));

    h.clock.advance(29_999);
    for (let step = 0; step < HOURLY_SHARDS; step++) await folder.foldStep();
    expect(await count('usage_hourly_pending')).toBe(recorded);
    expect(await hourly(accounts)).toEqual(new Map());

    h.clock.advance(1);
    for (let step = 0; step < HOURLY_SHARDS; step++) await folder.foldStep();
    expect(await count('usage_hourly_pending')).toBe(0);
    expect(await hourly(accounts)).toEqual(new Map(accounts.map((id) => [id, 20])));
  });

  it('a failed fold adds nothing and leaves its rows for the next one; the usage API answers 503 meanwhile', async () => {
    const [a] = await newAccounts(1);
    await apply(nodeFlush([[a!, 60]]));
    // A column the fold cannot add to: its upsert fails, the delete rolls back with it.
    await h.dataSource.query(
      `ALTER TABLE billing.usage_hourly ADD CONSTRAINT fold_test_small_cu CHECK (cu < 50) NOT VALID`,
    );
    try {
      await expect(
        billing.app.get(UsageFlushesRepository).foldHourly(hourlyShardOf(a!), 32),
      ).rejects.toThrow(/fold_test_small_cu/);
      expect(await count('usage_hourly_pending')).toBe(1);
      expect(await hourly([a!])).toEqual(new Map());
      // The usage API does not answer without the charge it could not fold: 503, retry later.
      const refused = await usageOf<{ error: string }>(a!);
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe('usage_unavailable');
    } finally {
      await h.dataSource.query(
        `ALTER TABLE billing.usage_hourly DROP CONSTRAINT fold_test_small_cu`,
      );
    }
    const usage = await usageOf<{ total_cu: number }>(a!);
    expect(usage.status).toBe(200);
    expect(usage.body.total_cu).toBe(60);
    expect(await hourly([a!])).toEqual(new Map([[a!, 60]]));
  });
});
