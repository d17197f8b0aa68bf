import {
  Consumers,
  Events,
  ledgerUsageConsumersOf,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { flushParts, UsageMeter } from '@meridian/platform-messaging';
import { checkLedger } from '../ledger/ledger-check';
import {
  api,
  BillingHarness,
  eventually,
  nodeFlush,
  nodeFlushV1,
  OPERATOR_TOKEN,
  stopProcess,
} from '../testing/billing-harness';
import { UnreadUsageWatch } from './unread-usage.service';

const PARTITIONS = 2;
/** The durables of a fleet of two ledger partitions, as provisioned (short ack wait). */
const DURABLES = ledgerUsageConsumersOf(PARTITIONS).map((c) => ({ ...c, ackWaitMs: 2_000 }));

describe('billing-ledger partitions (ADR 0105 step 3; real Postgres + NATS, ledger processes)', () => {
  const h = new BillingHarness();

  beforeAll(() => h.setup(DURABLES));
  afterAll(() => h.teardown());

  it('two ledger replicas apply their partitions apart; one killed -9 mid-flush loses nothing and applies nothing twice, to the CU', async () => {
    const setup = await h.start();
    const created = await api<{ items: Array<{ account: { id: string } }> }>(
      setup.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      { accounts: Array.from({ length: 40 }, (_, i) => ({ name: `part-${i}`, plan: 'starter' })) },
    );
    expect(created.status).toBe(201);
    const ids = created.body.items.map((i) => i.account.id);
    // Only the ledger processes below consume.
    await setup.app.close();

    // What producers publish (the real meter and part cutting), routed to two partitions.
    const expected = new Map<string, number>();
    const parts: UsageFlushedV2[] = [];
    for (let w = 0; w < 300; w++)
      for (const producer of ['gw-a', 'gw-b', 'dw-c']) {
        const meter = new UsageMeter();
        ids.forEach((id, i) => {
          const cu = 20 * ((i * 3 + w) % 11) + 20;
          meter.add(id, 'eth-mainnet', 'eth_call', cu, cu / 20);
          expected.set(id, (expected.get(id) ?? 0) + cu);
        });
        const start = new Date(Date.parse('2026-01-05T10:00:00.000Z') + w * 1_000);
        parts.push(
          ...flushParts(
            producer,
            start.toISOString(),
            new Date(start.getTime() + 999).toISOString(),
            meter.drain(),
            2 * 1024,
            PARTITIONS,
          ),
        );
      }
    // A producer not yet upgraded: v1 parts, every account, read by partition 0 (unpartitioned).
    const v1: UsageFlushed[] = [];
    for (let w = 0; w < 20; w++) {
      const accounts = ids.map((id) => [id, 40] as const);
      for (const [id, cu] of accounts) expected.set(id, (expected.get(id) ?? 0) + cu);
      v1.push(nodeFlushV1(accounts, 'gw-old'));
    }
    const partitionOfPart = new Map(parts.map((p) => [p.id, p.ledgerPartition!]));
    const ofPartition = (i: number) => parts.filter((p) => p.ledgerPartition === i).length;
    expect(ofPartition(0)).toBeGreaterThan(300);
    expect(ofPartition(1)).toBeGreaterThan(300);

    const applied = async (partition: number): Promise<number> => {
      const partIds = parts.filter((p) => p.ledgerPartition === partition).map((p) => p.id);
      const [{ n }] = await h.dataSource.query(
        'SELECT count(*) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])',
        [partIds],
      );
      return Number(n);
    };
    const durable = (partition: number) =>
      `${Consumers.ledgerUsage.durable}-p${partition}of${PARTITIONS}`;

    // Everything is in the stream first, so the processes are busy applying when one dies.
    for (let i = 0; i < parts.length; i += 100)
      await Promise.all(
        parts.slice(i, i + 100).map((part) => h.publisher.publish(Events.usageFlushedV2, part)),
      );
    for (const part of v1) await h.publisher.publish(Events.usageFlushed, part);

    const env = (partition: number) => ({ LEDGER_PARTITION: `${partition}/${PARTITIONS}` });
    const [zero, one] = await Promise.all([h.ledgerProcess(env(0)), h.ledgerProcess(env(1))]);
    let zeroAgain: Awaited<ReturnType<typeof h.ledgerProcess>> | undefined;
    try {
      await eventually(async () => (await applied(0)) >= 100, 60_000, 'partition 0 applying');
      await stopProcess(zero, 'SIGKILL');
      const atKill = await applied(0);
      expect(atKill).toBeLessThan(ofPartition(0));

      // Partition 1 is applied by its own replica while partition 0's is down; partition 0's
      // parts wait in its durable (nobody else reads them).
      await eventually(
        async () => (await applied(1)) === ofPartition(1) && (await h.usageDrained([durable(1)])),
        90_000,
        'partition 1 applied while partition 0 is down',
      );
      expect(await applied(0)).toBe(atKill);

      zeroAgain = await h.ledgerProcess(env(0));
      await eventually(
        async () =>
          (await applied(0)) === ofPartition(0) &&
          (await h.usageDrained(DURABLES.map((c) => c.durable))),
        90_000,
        'every part applied after the restart',
      );

      // To the CU: every part (v1 included) once, none twice.
      const rows: Array<{ account_id: string; cu: string }> = await h.dataSource.query(
        `SELECT account_id, sum(amount_cu) AS cu FROM billing.ledger_entries
          WHERE account_id = ANY($1::text[]) AND ledger = 'usage' GROUP BY account_id`,
        [ids],
      );
      expect(new Map(rows.map((r) => [r.account_id, Number(r.cu)]))).toEqual(expected);
      const report = await checkLedger(h.dataSource, ids);
      expect(report.unbalancedJournals).toEqual([]);
      expect(report.balanceMismatches).toEqual([]);
      const [{ n: v1Applied }] = await h.dataSource.query(
        'SELECT count(*) AS n FROM billing.usage_flushes WHERE id = ANY($1::text[])',
        [v1.map((p) => p.id)],
      );
      expect(Number(v1Applied)).toBe(v1.length);

      // No transaction mixed the partitions' compact parts: each replica applied its own.
      const batches: Array<{ ids: string[] }> = await h.dataSource.query(
        `SELECT array_agg(id) AS ids FROM billing.usage_flushes
          WHERE id = ANY($1::text[]) GROUP BY batch`,
        [parts.map((p) => p.id)],
      );
      expect(batches.length).toBeGreaterThan(2);
      for (const batch of batches)
        expect(new Set(batch.ids.map((id) => partitionOfPart.get(id))).size).toBe(1);
    } finally {
      await Promise.all(
        [zero, one, zeroAgain].map((child) => (child ? stopProcess(child) : undefined)),
      );
    }
  }, 300_000);

  it('partition 0 reports usage published on a subject no partition reads (a producer with another count), while it is recent', async () => {
    h.clock.set(Date.now());
    const zero = await h.start({ LEDGER_PARTITION: '0/2' });
    const one = await h.start({ LEDGER_PARTITION: '1/2' });
    const watch = zero.app.get(UnreadUsageWatch);
    expect(watch.active).toBe(true);
    expect(one.app.get(UnreadUsageWatch).active).toBe(false);
    expect(await watch.check()).toEqual([]);

    const stray = { ...nodeFlush([['acc_stray', 20]], 'gw-four'), ledgerPartition: 3 };
    await h.publisher.publish(Events.usageFlushedV2, stray);
    expect(await watch.check()).toEqual(['billing.usage.flushed.v2.u3']);
    const metrics = await (await fetch(`${zero.url}/metrics`)).text();
    expect(metrics).toMatch(/^billing_usage_unread_subjects({[^}]*})? 1$/m);
    // Its last message is the subject's age: once it is 10 minutes old it is no longer reported.
    h.clock.advance(10 * 60_000 + 1_000);
    expect(await watch.check()).toEqual([]);
    for (const billing of [zero, one]) await billing.app.close();
  });
});
