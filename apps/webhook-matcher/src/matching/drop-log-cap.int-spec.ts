import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { EventBody, Phase } from '@meridian/webhooks';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { cutShortError, MatchingRepository, type NewEvent } from './matching.repository';

const NETWORK = 'eth-mainnet';
const BLOCK = 0x1234;
const BLOCK_HASH = `0x${'ab'.repeat(32)}`;

/** The `i`-th event of the block for `webhookId`, dropped or not. */
function event(webhookId: string, i: number, phases: Phase[], dropped = true): NewEvent {
  const hash = `0x${i.toString(16).padStart(64, '0')}`;
  return {
    webhookId,
    eventId: `ev_${i}`,
    accountId: 'acc_free',
    network: NETWORK,
    blockNumber: BLOCK,
    blockHash: BLOCK_HASH,
    phases,
    confirmDepth: 2,
    dropped,
    payload: {
      network: NETWORK,
      block: { number: `0x${BLOCK.toString(16)}`, hash: BLOCK_HASH },
      raw: { hash, from: `0x${'1'.repeat(40)}`, to: `0x${'2'.repeat(40)}` },
    } as unknown as EventBody,
  };
}

/**
 * ADR 0433 amendment: a webhook far over its events budget (a Free webhook on a busy token
 * contract) gets at most DROP_LOG_ROWS_PER_BLOCK `rate_limited` rows per block; the rest are
 * counted, and its last row of the block says how many were not logged. Real Postgres.
 */
describe('MatchingRepository.recordEvents: rate_limited rows capped per webhook and block', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'wh_drop_cap' });
    ds = createAppDataSource(dataSourceOptions(db.url));
    await ds.initialize();
    await runMigrations(ds, SCHEMA);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const rowsOf = (webhookId: string) =>
    ds.query(
      `SELECT event_id, phase, outcome, billed, error, tx_hash FROM webhooks.delivery_attempts
        WHERE webhook_id = $1 ORDER BY event_id, phase DESC`,
      [webhookId],
    ) as Promise<Array<{ event_id: string; phase: string; error: string; outcome: string }>>;

  it('records exactly N rows of a block with more drops, the last naming the rest; every drop counted', async () => {
    const repo = new MatchingRepository(ds, 6);
    const busy = Array.from({ length: 10 }, (_, i) => event('wh_busy', i, ['unconfirmed']));
    // Two phases: whole events while their rows fit (3 events, 6 rows), 2 more not logged.
    const both = Array.from({ length: 5 }, (_, i) =>
      event('wh_both', i, ['unconfirmed', 'confirmed']),
    );
    const admitted = [event('wh_busy', 100, ['unconfirmed'], false)];
    const block = [...admitted, ...busy, ...both];
    await repo.recordEvents(block, new Date());

    const busyRows = await rowsOf('wh_busy');
    expect(busyRows).toHaveLength(6);
    expect(busyRows.map((r) => r.event_id)).toEqual([
      'ev_0',
      'ev_1',
      'ev_2',
      'ev_3',
      'ev_4',
      'ev_5',
    ]);
    expect(busyRows.every((r) => r.outcome === 'rate_limited')).toBe(true);
    expect(busyRows.slice(0, 5).map((r) => r.error)).toEqual(
      Array(5).fill(
        "dropped: over the account's events per second and burst (not sent, not billed)",
      ),
    );
    expect(busyRows[5]!.error).toBe(cutShortError(4));
    expect(busyRows[5]!.error).toMatch(/; 4 more events of this block dropped and not logged/);
    expect(await repo.rateLimitedTotal('wh_busy')).toBe(10);

    const bothRows = await rowsOf('wh_both');
    expect(bothRows.map((r) => `${r.event_id}/${r.phase}`)).toEqual([
      'ev_0/unconfirmed',
      'ev_0/confirmed',
      'ev_1/unconfirmed',
      'ev_1/confirmed',
      'ev_2/unconfirmed',
      'ev_2/confirmed',
    ]);
    expect(bothRows.filter((r) => r.error === cutShortError(2))).toHaveLength(1);
    expect(await repo.rateLimitedTotal('wh_both')).toBe(5);

    // The block redelivered: nothing new is recorded or counted.
    await repo.recordEvents(block, new Date());
    expect(await rowsOf('wh_busy')).toHaveLength(6);
    expect(await repo.rateLimitedTotal('wh_busy')).toBe(10);
  });

  it('a block within the cap logs every drop with the plain error', async () => {
    const repo = new MatchingRepository(ds);
    await repo.recordEvents(
      Array.from({ length: 3 }, (_, i) => event('wh_few', i, ['unconfirmed'])),
      new Date(),
    );
    const rows = await rowsOf('wh_few');
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => !r.error.includes('not logged'))).toBe(true);
  });
});
