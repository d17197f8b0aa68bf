import { Events, type UsageRecorded } from '@meridian/contracts';
import { NatsClient, type ConsumedMessage } from '@meridian/platform-messaging';
import { checkLedger } from '../ledger/ledger-check';
import {
  api,
  BillingHarness,
  eventually,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { UsageConsumer } from './usage.consumer';

describe('billing-ledger usage consumer (real Postgres + NATS)', () => {
  const h = new BillingHarness();

  beforeAll(() => h.setup());
  afterAll(() => h.teardown());

  async function newAccount(billing: BillingApp, plan = 'starter'): Promise<string> {
    const created = await api<{ account: { id: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'usage', plan },
    );
    expect(created.status).toBe(201);
    return created.body.account.id;
  }

  const usedCu = async (accountId: string): Promise<number> => {
    const [row] = await h.dataSource.query(
      `SELECT coalesce(sum(amount_cu), 0) AS cu FROM billing.entries WHERE account_id = $1 AND ledger = 'usage'`,
      [accountId],
    );
    return Number(row.cu);
  };

  const journals = async (accountId: string): Promise<number> => {
    const [row] = await h.dataSource.query(
      `SELECT count(*) AS n FROM billing.journals WHERE account_id = $1 AND kind = 'usage'`,
      [accountId],
    );
    return Number(row.n);
  };

  it('applies a usage event redelivered 3 times exactly once', async () => {
    const billing = await h.start();
    const accountId = await newAccount(billing);
    const event = nodeUsage(accountId, 1_240);

    // Three copies in the stream (distinct Nats-Msg-Id, so the stream's own dedupe can't help) …
    for (const copy of ['a', 'b', 'c'])
      await h.publisher.publishJson(
        Events.usageRecorded.subjectOf(event),
        event,
        `${event.id}#${copy}`,
      );
    // … and the first delivery of a fourth copy is nak'd twice after its commit (lost acks).
    let failures = 0;
    const consumer = billing.app.get(UsageConsumer);
    consumer.afterApply = async (applied) => {
      if (applied.id === event.id && failures < 2) {
        failures += 1;
        throw new Error('simulated crash before ack');
      }
    };
    await h.publisher.publishJson(Events.usageRecorded.subjectOf(event), event, `${event.id}#d`);

    await eventually(
      async () => failures === 2 && (await h.usageDrained()),
      15_000,
      'usage drained',
    );
    expect(await usedCu(accountId)).toBe(1_240);
    expect(await journals(accountId)).toBe(1);
    consumer.afterApply = undefined;
    await billing.app.close();
  });

  it('loses nothing and doubles nothing when the consumer dies between commit and ack', async () => {
    const first = await h.start();
    const accountId = await newAccount(first);
    const events: UsageRecorded[] = Array.from({ length: 40 }, (_, i) =>
      nodeUsage(accountId, 20 * (i + 1)),
    );
    const expected = events.reduce((sum, e) => sum + e.totalCu, 0);

    // The first instance commits, then its NATS connection dies before any ack goes out.
    let committed = 0;
    let release!: () => void;
    const dead = new Promise<void>((resolve) => (release = resolve));
    first.app.get(UsageConsumer).afterApply = async () => {
      committed += 1;
      if (committed === 10) await first.app.get(NatsClient).current()?.close();
      if (committed >= 10) await dead; // the process is "dead": its acks never reach NATS
    };
    for (const event of events) await h.publisher.publish(Events.usageRecorded, event);
    await eventually(async () => committed >= 10, 10_000, 'first instance committed some usage');
    expect(await usedCu(accountId)).toBeGreaterThan(0);

    // A second instance takes over; unacked messages come back after ack_wait and are no-ops.
    const second = await h.start();
    await eventually(
      async () => (await h.usageDrained()) && (await usedCu(accountId)) === expected,
      30_000,
      'all usage applied',
    );
    expect(await usedCu(accountId)).toBe(expected);
    expect(await journals(accountId)).toBe(events.length);
    const report = await checkLedger(h.dataSource, [accountId]);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
    expect(report.unbalancedJournals).toEqual([]);
    await second.app.close();
    release();
    await first.app.close();
  });

  it('refuses alone an event Postgres cannot store; the events applied with it commit', async () => {
    const billing = await h.start();
    const accountId = await newAccount(billing);
    const consumer = billing.app.get(UsageConsumer);
    // Handed over as if it had passed its schema (the schema refuses it since: no year 0).
    const message = (payload: UsageRecorded, streamSequence: number): ConsumedMessage => ({
      event: Events.usageRecorded,
      payload,
      subject: Events.usageRecorded.subjectOf(payload),
      deliveryCount: 1,
      streamSequence,
      msgId: payload.id,
      data: new TextEncoder().encode(JSON.stringify(payload)),
      working: () => undefined,
    });
    const events = [
      nodeUsage(accountId, 100),
      nodeUsage(accountId, 7, '0000-01-01T00:00:00.000Z'),
      nodeUsage(accountId, 200),
    ];
    const results = await Promise.allSettled(events.map((e, i) => consumer.handle(message(e, i))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      code: 'unappliable_usage',
      retryable: false,
    });
    expect(await usedCu(accountId)).toBe(300);
    expect(await journals(accountId)).toBe(2);
    await billing.app.close();
  });

  it('dead-letters usage of an unknown account instead of dropping it silently', async () => {
    const billing = await h.start();
    const event = nodeUsage('acc_does_not_exist', 100);
    await h.publisher.publish(Events.usageRecorded, event);
    await eventually(() => h.usageDrained(), 10_000, 'usage drained');
    const stream = await (await import('@nats-io/jetstream')).jetstreamManager(h.nc);
    const letter = await stream.streams.getMessage(`${h.prefix}_BILLING`, {
      last_by_subj: `${h.prefix}.billing.message.dead-lettered.v1.billing-ledger-usage`,
    });
    expect(letter?.json<{ reason: string; error: { code: string } }>()).toMatchObject({
      reason: 'permanent_error',
      error: { code: 'unknown_account' },
    });
    await billing.app.close();
  });
});
