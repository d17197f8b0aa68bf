import { Events, deliveryJobId, type DeliveryHealth } from '@meridian/contracts';
import { createAppDataSource } from '@meridian/platform-db';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import pino from 'pino';
import { DataSource } from 'typeorm';
import {
  address,
  eventually,
  startMatcherStack,
  TARGET,
  type MatcherTestStack,
} from '../../test/support/matcher-app';
import { dataSourceOptions } from '../db/data-source';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import {
  ServiceDecisionSweep,
  SWEEP_BATCH,
  SWEEP_LOCK_KEY,
} from './service-decision-sweep.service';

jest.setTimeout(180_000);

const MIN = 60_000;
/** billing's default TOPUP_CLEARING_MS (the harness leaves it as production has it). */
const CLEARING_MS = 90_000;

/**
 * The QA report "the 30-minute pauses fire only when a new attempt result arrives": the sweep
 * takes both service decisions when their time comes, with no outcome arriving after it. Real
 * Postgres, NATS (outcomes go through the delivery-health consumer) and billing-ledger; the
 * sweep's own timer is off (SERVICE_DECISION_SWEEP_MS=0) and each pass is run by the test on
 * the moved FakeClock.
 */
describe('service decision sweep: paused_auto and paused_no_balance when the 30 minutes are up', () => {
  let s: MatcherTestStack;
  let client: NatsClient;
  let publisher: JetStreamPublisher;
  let sweep: ServiceDecisionSweep;
  let seq = 0;

  beforeAll(async () => {
    s = await startMatcherStack({ SERVICE_DECISION_SWEEP_MS: '0' }, { TEST_CLOCK_CONTROL: 'true' });
    sweep = s.app.get(ServiceDecisionSweep);
    client = new NatsClient({ url: testNatsUrl(), name: 'sweep-test' });
    await client.connection();
    publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
  });
  afterAll(async () => {
    await client?.close();
    await s?.close();
  });

  const create = async (key: string): Promise<string> => {
    const answer = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(7)],
    });
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };
  const statusOf = async (key: string, id: string) =>
    (await s.call('GET', `/webhooks/${id}`, key)).body.status as string;
  const failedTotal = async (key: string, id: string) =>
    (await s.call('GET', `/webhooks/${id}/stats`, key)).body.failed_total as number;
  const history = async (id: string) =>
    (
      (await s.dataSource.query(
        `SELECT to_status, trigger, actor FROM webhooks.status_history WHERE webhook_id = $1 ORDER BY id`,
        [id],
      )) as Array<{ to_status: string; trigger: string; actor: string }>
    ).map((h) => `${h.to_status}:${h.trigger}:${h.actor}`);
  const exhaustedSince = async (accountId: string): Promise<Date | null> =>
    (
      (await s.dataSource.query(
        `SELECT exhausted_since FROM webhooks.accounts WHERE account_id = $1`,
        [accountId],
      )) as Array<{ exhausted_since: Date | null }>
    )[0]?.exhausted_since ?? null;

  /** What delivery-worker publishes after an attempt, at the clock's time. */
  const outcome = async (
    webhookId: string,
    accountId: string,
    fields: Partial<DeliveryHealth> & Pick<DeliveryHealth, 'outcome'>,
  ): Promise<void> => {
    seq += 1;
    const eventId = `ev_${seq.toString(16).padStart(32, '0')}`;
    await publisher.publish(Events.deliveryHealth, {
      id: `${deliveryJobId(webhookId, eventId, 'unconfirmed')}:1`,
      webhookId,
      accountId,
      eventId,
      phase: 'unconfirmed',
      attempt: 1,
      billed: fields.outcome === 'failure',
      final: fields.outcome === 'success',
      at: s.clock.now().toISOString(),
      // A failure is the receiver's 500 unless it says otherwise (no_balance: nothing was sent).
      ...(fields.outcome === 'failure' && fields.errorClass === undefined
        ? { statusCode: 500, errorClass: 'http_status' }
        : {}),
      ...fields,
    } satisfies DeliveryHealth);
  };
  /** `n` failed attempts (receiver 500) at the clock's time, all recorded. */
  const failures = async (key: string, accountId: string, id: string, n: number) => {
    const before = await failedTotal(key, id);
    for (let i = 0; i < n; i += 1) await outcome(id, accountId, { outcome: 'failure' });
    await eventually(async () => (await failedTotal(key, id)) === before + n);
  };

  it('20 failing attempts and 31 minutes since the first: paused_auto by the sweep with no new outcome; once, whoever decides', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id = await create(key);
    await failures(key, accountId, id, 20);
    expect(await statusOf(key, id)).toBe('active');
    s.clock.advance(31 * MIN);
    // The consumer would decide only at the next outcome: none arrives.
    expect(await statusOf(key, id)).toBe('active');
    // The sweep and a concurrent decision (another replica, or the consumer) race: one wins.
    const [swept, direct] = await Promise.all([
      sweep.run(),
      s.status.applyDeliveryHealth(id, { failingSince: new Date(0), attemptsSinceFailing: 20 }),
    ]);
    expect(Number(swept.autoPaused.includes(id)) + Number(direct)).toBe(1);
    expect(await statusOf(key, id)).toBe('paused_auto');
    expect(await history(id)).toEqual(['active:create:owner', 'paused_auto:auto_pause:service']);
    // Idempotent: the next pass changes nothing.
    expect((await sweep.run()).autoPaused).not.toContain(id);
    expect(await history(id)).toHaveLength(2);
  });

  it('19 attempts over 31 minutes stay active; 20 attempts pause at 30 minutes, not at 29', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const few = await create(key);
    const many = await create(key);
    await failures(key, accountId, few, 19);
    await failures(key, accountId, many, 20);
    s.clock.advance(29 * MIN);
    await sweep.run();
    expect(await statusOf(key, few)).toBe('active');
    expect(await statusOf(key, many)).toBe('active');
    s.clock.advance(MIN);
    expect((await sweep.run()).autoPaused).toEqual([many]);
    expect(await statusOf(key, many)).toBe('paused_auto');
    s.clock.advance(2 * MIN);
    await sweep.run();
    expect(await statusOf(key, few)).toBe('active');
  });

  it('a success after the failures ends the run: still active 31 minutes later', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id = await create(key);
    await failures(key, accountId, id, 20);
    s.clock.advance(MIN);
    await outcome(id, accountId, { outcome: 'success', statusCode: 200 });
    await eventually(
      async () => (await s.call('GET', `/webhooks/${id}/stats`, key)).body.delivered_total === 1,
    );
    s.clock.advance(30 * MIN);
    expect((await sweep.run()).autoPaused).not.toContain(id);
    expect(await statusOf(key, id)).toBe('active');
  });

  it('at zero balance with events to deliver: paused_no_balance by the sweep 30 minutes after exhaustedSince, not at 29; without events to deliver, active', async () => {
    // A node owner without a plan has no allowance: its balance is zero from the start.
    // (The Free limits allow one active webhook: `idle` is another such account's.)
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const other = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const waiting = await create(owner.key);
    const idle = await create(other.key);
    const since = await exhaustedSince(owner.accountId);
    expect(since).toBeInstanceOf(Date);
    expect(await exhaustedSince(other.accountId)).toBeInstanceOf(Date);
    // delivery-worker held an event of `waiting` for 10 minutes, then logged it no_balance.
    s.clock.set(new Date(since!.getTime() + 12 * MIN));
    await outcome(waiting, owner.accountId, {
      outcome: 'failure',
      billed: false,
      errorClass: 'no_balance',
    });
    await eventually(async () => (await failedTotal(owner.key, waiting)) === 1);
    // A free test delivery held the same way is not an event to deliver.
    await outcome(idle, other.accountId, {
      outcome: 'failure',
      billed: false,
      test: true,
      errorClass: 'no_balance',
    });
    await eventually(
      async () =>
        (
          (await s.dataSource.query(
            `SELECT 1 FROM webhooks.delivery_attempts WHERE webhook_id = $1`,
            [idle],
          )) as unknown[]
        ).length === 1,
    );
    s.clock.set(new Date(since!.getTime() + 29 * MIN));
    expect((await sweep.run()).noBalancePaused).toEqual([]);
    expect(await statusOf(owner.key, waiting)).toBe('active');
    s.clock.set(new Date(since!.getTime() + 31 * MIN));
    expect((await sweep.run()).noBalancePaused).toEqual([waiting]);
    expect(await statusOf(owner.key, waiting)).toBe('paused_no_balance');
    expect(await history(waiting)).toEqual([
      'active:create:owner',
      'paused_no_balance:no_balance:service',
    ]);
    expect(await statusOf(other.key, idle)).toBe('active');
  });

  it('skips its pass while Postgres is out of reach (DbJobGate closed): no throw, nothing decided', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id = await create(key);
    await failures(key, accountId, id, 20);
    s.clock.advance(31 * MIN);
    // A DataSource that never connected: its gate is closed, as during an outage.
    const away: DataSource = createAppDataSource(dataSourceOptions(s.config.DATABASE_URL));
    const offline = new ServiceDecisionSweep(
      away,
      new DeliveriesRepository(away),
      s.status,
      s.config,
      s.clock,
      pino({ level: 'silent' }),
    );
    await expect(offline.run()).resolves.toEqual({ autoPaused: [], noBalancePaused: [] });
    expect(await statusOf(key, id)).toBe('active');
    expect((await sweep.run()).autoPaused).toContain(id);
  });

  /**
   * `n` copies of webhook `from` (active, its account's) with a failing run of 20 attempts that
   * started 31 minutes ago: as many auto-pause candidates as a test needs, without creating each
   * through the API and its caps. Their run is stored as `record` leaves it.
   */
  const seedFailing = async (from: string, n: number, tag: string): Promise<string[]> => {
    const rows: { id: string }[] = await s.dataSource.query(
      `INSERT INTO webhooks.webhooks
       SELECT (jsonb_populate_record(NULL::webhooks.webhooks, to_jsonb(w) || jsonb_build_object(
                 'id', 'wh_' || $2::text || translate(lpad(g::text, 24 - length($2::text), '0'), '0123456789', 'abcdefghij'),
                 'seq', nextval(pg_get_serial_sequence('webhooks.webhooks', 'seq')),
                 'idempotency_key', NULL))).*
         FROM webhooks.webhooks w, generate_series(1, $3::int) g
        WHERE w.id = $1
       RETURNING id`,
      [from, tag, n],
    );
    const ids = rows.map((r) => r.id);
    const since = new Date(s.clock.now().getTime() - 31 * MIN);
    await s.dataSource.query(
      `INSERT INTO webhooks.delivery_stats
         (webhook_id, failed_total, failing_since, attempts_since_failing)
       SELECT id, 20, $2::timestamptz + (o::int * interval '1 millisecond'), 20
         FROM unnest($1::text[]) WITH ORDINALITY AS t(id, o)`,
      [ids, since],
    );
    return ids;
  };
  const statusesOf = async (ids: string[]) =>
    (
      (await s.dataSource.query(
        `SELECT DISTINCT status FROM webhooks.webhooks WHERE id = ANY($1::text[])`,
        [ids],
      )) as Array<{ status: string }>
    ).map((r) => r.status);
  /** Whether a backend waits for a webhook's row lock (a decision blocked by the test's lock). */
  const decisionWaiting = async () =>
    (
      (await s.dataSource.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query LIKE '%FROM webhooks.webhooks WHERE id = $1 FOR UPDATE%'`,
      )) as unknown[]
    ).length > 0;

  it('a success recorded after the sweep read its candidates, before its decision, wins: still active (the run is read again under the row locks)', async () => {
    const { key, accountId } = await s.billing.createAccount({ plan: 'starter' });
    const id = await create(key);
    await failures(key, accountId, id, 20);
    s.clock.advance(31 * MIN);
    // Hold the webhook's row lock (an API write in progress): the sweep reads its candidates,
    // then waits for the lock at its decision.
    const holder = s.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    let pass: Promise<Awaited<ReturnType<ServiceDecisionSweep['run']>>> | undefined;
    try {
      await holder.query(`SELECT 1 FROM webhooks.webhooks WHERE id = $1 FOR UPDATE`, [id]);
      pass = sweep.run();
      await eventually(decisionWaiting);
      // Meanwhile the receiver answers 200: the success commits before the decision is taken.
      await outcome(id, accountId, { outcome: 'success', statusCode: 200 });
      await eventually(
        async () => (await s.call('GET', `/webhooks/${id}/stats`, key)).body.delivered_total === 1,
      );
    } finally {
      await holder.commitTransaction();
      await holder.release();
    }
    expect((await pass!).autoPaused).not.toContain(id);
    expect(await statusOf(key, id)).toBe('active');
    expect(await history(id)).toEqual(['active:create:owner']);
  });

  it(`more than SWEEP_BATCH (${SWEEP_BATCH}) candidates: all paused in one pass`, async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const first = await create(key);
    const ids = await seedFailing(first, SWEEP_BATCH + 10, 'batch');
    const { autoPaused } = await sweep.run();
    expect(autoPaused).toEqual(expect.arrayContaining(ids));
    expect(await statusesOf(ids)).toEqual(['paused_auto']);
    // Small batches (the seam) walk the same way: batch after batch until a short one.
    const more = await seedFailing(first, 7, 'small');
    const small = new ServiceDecisionSweep(
      s.dataSource,
      s.app.get(DeliveriesRepository),
      s.status,
      s.config,
      s.clock,
      pino({ level: 'silent' }),
      { batch: 2 },
    );
    expect((await small.run()).autoPaused).toEqual(expect.arrayContaining(more));
    expect(await statusesOf(more)).toEqual(['paused_auto']);
  });

  it('two sweeps at once (two connection pools, as two replicas): one takes the decisions, the other skips its pass with an empty result', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const ids = await seedFailing(await create(key), 3, 'two');
    const elsewhere: DataSource = createAppDataSource(dataSourceOptions(s.config.DATABASE_URL));
    await elsewhere.initialize();
    const other = new ServiceDecisionSweep(
      elsewhere,
      new DeliveriesRepository(elsewhere),
      s.status,
      s.config,
      s.clock,
      pino({ level: 'silent' }),
    );
    // The first sweep is held at its first decision by the rows' lock, mid-pass.
    const holder = s.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`SELECT 1 FROM webhooks.webhooks WHERE id = ANY($1::text[]) FOR UPDATE`, [
        ids,
      ]);
      const first = sweep.run();
      await eventually(decisionWaiting);
      let second: Awaited<ReturnType<ServiceDecisionSweep['run']>> | undefined;
      void other.run().then((r) => (second = r));
      // It answers while the first pass still holds the lock, without waiting for it.
      await eventually(async () => second !== undefined);
      expect(second).toEqual({ autoPaused: [], noBalancePaused: [] });
      await holder.commitTransaction();
      expect((await first).autoPaused).toEqual(expect.arrayContaining(ids));
      expect(await statusesOf(ids)).toEqual(['paused_auto']);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
      await elsewhere.destroy();
    }
  });

  it('a holder that dies (its connection gone) does not block the sweep: the lock ends with it', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const ids = await seedFailing(await create(key), 2, 'dead');
    // Another replica's pool, mid-pass: its transaction holds the sweep's lock.
    const dying: DataSource = createAppDataSource(dataSourceOptions(s.config.DATABASE_URL));
    await dying.initialize();
    const holder = dying.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [SWEEP_LOCK_KEY]);
    const [{ pid }]: { pid: number }[] = await holder.query(`SELECT pg_backend_pid() AS pid`);
    expect(await sweep.run()).toEqual({ autoPaused: [], noBalancePaused: [] });
    expect(await statusesOf(ids)).toEqual(['active']);
    // That replica is killed: Postgres ends its session, and the lock with it.
    await s.dataSource.query(`SELECT pg_terminate_backend($1)`, [pid]);
    await eventually(
      async () =>
        (
          (await s.dataSource.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [
            pid,
          ])) as unknown[]
        ).length === 0,
    );
    await holder.release().catch(() => {});
    await dying.destroy().catch(() => {});
    expect((await sweep.run()).autoPaused).toEqual(expect.arrayContaining(ids));
    expect(await statusesOf(ids)).toEqual(['paused_auto']);
  });

  // Last: it moves billing's clock past the top-up's clearing.
  it('a top-up cleared before the 30 minutes: still active at 31 minutes', async () => {
    const owner = await s.billing.createAccount({ type: 'team', plan: null, node_owner: true });
    const id = await create(owner.key);
    const since = await exhaustedSince(owner.accountId);
    expect(since).toBeInstanceOf(Date);
    s.clock.set(new Date(since!.getTime() + 12 * MIN));
    await outcome(id, owner.accountId, {
      outcome: 'failure',
      billed: false,
      errorClass: 'no_balance',
    });
    await eventually(async () => (await failedTotal(owner.key, id)) === 1);
    await s.billing.topUp(owner.key, 1_000_000);
    await s.billing.advanceClock(CLEARING_MS + 1_000);
    await eventually(async () => (await exhaustedSince(owner.accountId)) === null, 20_000);
    s.clock.set(new Date(since!.getTime() + 31 * MIN));
    expect((await sweep.run()).noBalancePaused).not.toContain(id);
    expect(await statusOf(owner.key, id)).toBe('active');
  });
});
