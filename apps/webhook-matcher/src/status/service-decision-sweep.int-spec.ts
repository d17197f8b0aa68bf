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
import { ServiceDecisionSweep } from './service-decision-sweep.service';

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
