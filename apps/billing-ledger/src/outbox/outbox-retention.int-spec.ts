import { DAY, MINUTE } from '@meridian/time';
import { BillingHarness, type BillingApp } from '../testing/billing-harness';
import { OutboxRetention } from './outbox-retention';

describe('outbox retention: published events older than OUTBOX_RETENTION_DAYS are deleted (real Postgres, fake clock)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start({ OUTBOX_RETENTION_DAYS: '3' });
  });
  afterAll(() => h.teardown());

  /** An outbox row created and (unless null) published at those times; its id. */
  async function row(createdAt: number, publishedAt: number | null): Promise<string> {
    const rows: Array<{ id: string }> = await h.dataSource.query(
      `INSERT INTO billing.outbox (event_type, payload, created_at, published_at)
       VALUES ('planChanged', '{}', $1, $2) RETURNING id`,
      [new Date(createdAt), publishedAt === null ? null : new Date(publishedAt)],
    );
    return rows[0]!.id;
  }

  const ids = async (): Promise<string[]> =>
    (
      (await h.dataSource.query('SELECT id FROM billing.outbox ORDER BY id')) as Array<{
        id: string;
      }>
    ).map((r) => r.id);

  async function prunedTotal(): Promise<number> {
    const text = await (await fetch(`${billing.url}/metrics`)).text();
    return Number(
      /^billing_outbox_pruned_total(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? Number.NaN,
    );
  }

  it('deletes published events past the window, keeps younger ones and every unpublished one', async () => {
    const now = h.clock.now().getTime();
    const window = 3 * DAY;
    const before = await ids();
    const expired = await row(now - window - 2 * DAY, now - window - MINUTE);
    const young = await row(now - window - 2 * DAY, now - window + MINUTE);
    const fresh = await row(now - MINUTE, now - MINUTE);
    const unpublished = await row(now - 30 * DAY, null);
    expect(await prunedTotal()).toBe(0);

    expect(await billing.app.get(OutboxRetention).prune()).toBe(1);
    expect(await ids()).toEqual([...before, young, fresh, unpublished]);
    expect(await prunedTotal()).toBe(1);
    expect(await ids()).not.toContain(expired);

    // Two minutes later the younger one is past the window too; the unpublished one stays.
    h.clock.advance(2 * MINUTE);
    expect(await billing.app.get(OutboxRetention).prune()).toBe(1);
    expect(await ids()).toEqual([...before, fresh, unpublished]);
    expect(await prunedTotal()).toBe(2);
  });
});
