import { DataSource } from 'typeorm';
import {
  Events,
  deliveryJobId,
  type DeliveryHealth,
  type DeliveryJob,
  type WebhookEventBody,
} from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  address,
  eventually,
  startMatcherStack,
  TARGET,
  type MatcherTestStack,
} from '../../test/support/matcher-app';
import { createHttpApp } from '@meridian/platform-http';
import pino from 'pino';
import { Registry } from 'prom-client';
import { AppModule } from '../app.module';
import { REPLAY_HOLD_MS } from './deliveries.repository';
import { deliveriesPage, deliveryStats, replayResponse } from './deliveries.schemas';
import { ChangeLogRetention } from '../status/change-log-retention.service';
import { DeliveryLogRetention } from './delivery-log-retention.service';

jest.setTimeout(180_000);

const MIN = 60_000;

/** Event ids as the matcher makes them (eventIdOf: `ev_` + 32 hex); replay checks the form. */
const GIVEN_UP = `ev_${'a1'.padStart(32, '0')}`;
const OTHER = `ev_${'b2'.padStart(32, '0')}`;
describe('deliveries: attempt log, stats, auto-pause feed and replay (real NATS, Postgres, billing-ledger)', () => {
  let s: MatcherTestStack;
  let client: NatsClient;
  let publisher: JetStreamPublisher;
  let nc: NatsConnection;
  let key: string;
  let accountId: string;
  let other: string;
  let seq = 0;

  beforeAll(async () => {
    s = await startMatcherStack();
    client = new NatsClient({ url: testNatsUrl(), name: 'deliveries-test' });
    await client.connection();
    publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
    nc = await connect({ servers: testNatsUrl() });
    ({ key, accountId } = await s.billing.createAccount({ plan: 'starter' }));
    other = (await s.billing.createAccount({ plan: 'starter' })).key;
  });
  afterAll(async () => {
    await client?.close();
    await nc?.close();
    await s?.close();
  });

  const create = async () => {
    const answer = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: [address(7)],
    });
    expect(answer.status).toBe(201);
    return answer.body.id as string;
  };

  const payload = (webhookId: string, eventId: string, block = 100): WebhookEventBody => ({
    webhookId,
    eventId,
    type: 'address_activity',
    network: 'eth-mainnet',
    confirmed: false,
    removed: false,
    block: { number: `0x${block.toString(16)}`, hash: `0x${'ab'.repeat(32)}`, timestamp: '0x1' },
    raw: { transactionHash: `0x${'cd'.repeat(32)}` },
  });

  /** What delivery-worker publishes after an attempt. */
  const attempt = async (
    webhookId: string,
    fields: Partial<DeliveryHealth> & Pick<DeliveryHealth, 'outcome'>,
  ): Promise<DeliveryHealth> => {
    seq += 1;
    const eventId = fields.eventId ?? `ev_${seq}`;
    const n = fields.attempt ?? 1;
    const health: DeliveryHealth = {
      id: `${deliveryJobId(webhookId, eventId, 'unconfirmed')}:${n}`,
      webhookId,
      accountId,
      eventId,
      phase: 'unconfirmed',
      attempt: n,
      billed: fields.outcome !== 'skipped_breaker_open',
      final: fields.outcome === 'success',
      at: s.clock.now().toISOString(),
      ...(fields.outcome === 'failure'
        ? { statusCode: 500, errorClass: 'http_status' as const }
        : {}),
      ...fields,
    };
    await publisher.publish(Events.deliveryHealth, health);
    return health;
  };

  const stats = async (id: string) => (await s.call('GET', `/webhooks/${id}/stats`, key)).body;

  it('counts delivered and failed attempts once each (breaker skips count as failed) and lists failures newest first', async () => {
    const id = await create();
    await attempt(id, { outcome: 'success', statusCode: 200, durationMs: 12 });
    const f1 = await attempt(id, { outcome: 'failure', responseBody: 'nope', durationMs: 30 });
    // Outcomes are consumed in parallel and the log lists them in the order they were recorded:
    // f2 goes out once f1 is in, as a later attempt would.
    await eventually(async () => (await stats(id)).failed_total === 1);
    s.clock.advance(1_000);
    const f2 = await attempt(id, { outcome: 'skipped_breaker_open', errorClass: 'breaker_open' });
    // A redelivered outcome changes nothing.
    await publisher.publishJson(`webhook.delivery.attempted.v1.${accountId}`, f1, `${f1.id}-again`);
    await eventually(async () => (await stats(id)).failed_total === 2);
    expect(await stats(id)).toEqual({
      delivered_total: 1,
      failed_total: 2,
      rate_limited_total: 0,
      last_delivered_at: expect.any(String),
    });
    expect(deliveryStats.safeParse(await stats(id)).error).toBeUndefined();
    const page1 = await s.call('GET', `/webhooks/${id}/deliveries?limit=1`, key);
    expect(page1.status).toBe(200);
    expect(deliveriesPage.safeParse(page1.body).error).toBeUndefined();
    expect(page1.body.items).toEqual([
      expect.objectContaining({
        event_id: f2.eventId,
        outcome: 'skipped_breaker_open',
        error_class: 'breaker_open',
      }),
    ]);
    const page2 = await s.call(
      'GET',
      `/webhooks/${id}/deliveries?limit=1&cursor=${page1.body.next_cursor}`,
      key,
    );
    expect(page2.body.items).toEqual([
      expect.objectContaining({
        event_id: f1.eventId,
        attempt: 1,
        status_code: 500,
        duration_ms: 30,
        error_class: 'http_status',
        response_body: 'nope',
      }),
    ]);
    expect(page2.body.next_cursor).toBeNull();
    expect(deliveriesPage.safeParse(page2.body).error).toBeUndefined();
    // Someone else's id is a 404 like an unknown one; a bad cursor is a 400.
    expect((await s.call('GET', `/webhooks/${id}/stats`, other)).status).toBe(404);
    expect((await s.call('GET', `/webhooks/${id}/deliveries`, other)).status).toBe(404);
    expect((await s.call('GET', `/webhooks/${id}/deliveries?cursor=x`, key)).status).toBe(400);
  });

  it('deletes attempts older than DELIVERY_LOG_RETENTION_DAYS from the log and keeps the counters', async () => {
    const id = await create();
    const retention = s.config.DELIVERY_LOG_RETENTION_DAYS * 24 * 60 * MIN;
    const now = s.clock.now().getTime();
    const expired = await attempt(id, {
      outcome: 'failure',
      at: new Date(now - retention - MIN).toISOString(),
    });
    await eventually(async () => (await stats(id)).failed_total === 1);
    const kept = await attempt(id, {
      outcome: 'failure',
      at: new Date(now - retention + MIN).toISOString(),
    });
    await eventually(async () => (await stats(id)).failed_total === 2);
    const listed = async () =>
      (
        (await s.call('GET', `/webhooks/${id}/deliveries`, key)).body.items as {
          event_id: string;
        }[]
      ).map((i) => i.event_id);
    expect(await listed()).toEqual([kept.eventId, expired.eventId]);
    // Counted as delivery-worker's attempt log is (`*_pruned_total`).
    const pruned = async () =>
      (
        await s.app
          .get(Registry)
          .getSingleMetric('webhook_matcher_delivery_log_pruned_total')!
          .get()
      ).values[0]?.value ?? 0;
    const prunedBefore = await pruned();

    expect(await s.app.get(DeliveryLogRetention).prune()).toBeGreaterThanOrEqual(1);
    expect(await listed()).toEqual([kept.eventId]);
    expect((await stats(id)).failed_total).toBe(2);
    expect(await pruned()).toBeGreaterThanOrEqual(prunedBefore + 1);
    // A minute later the other one has expired too.
    s.clock.advance(2 * MIN);
    const prunedMid = await pruned();
    await s.app.get(DeliveryLogRetention).prune();
    expect(await listed()).toEqual([]);
    expect(await pruned()).toBeGreaterThanOrEqual(prunedMid + 1);
  });

  it('deletes change feed rows older than CHANGE_LOG_RETENTION_HOURS, keeps younger ones (ADR 0402 amendment)', async () => {
    // Rows of a webhook id of their own (the feed has no foreign key): a created webhook would
    // hold one of the Starter account's active slots that later tests need.
    const id = 'wh_retention';
    const db = s.app.get(DataSource);
    const retentionMs = s.config.CHANGE_LOG_RETENTION_HOURS * 60 * MIN;
    // Backdated by the database's clock, which writes `at` and which the feed's readers use.
    const change = async (ageMs: number): Promise<string> =>
      (
        (await db.query(
          `INSERT INTO webhooks.change_log (account_id, webhook_id, at)
           VALUES ('acc_retention', $1, now() - $2 * interval '1 millisecond') RETURNING seq`,
          [id, ageMs],
        )) as { seq: string }[]
      )[0]!.seq;
    const count = async () =>
      (
        (await db.query('SELECT count(*)::int AS n FROM webhooks.change_log')) as { n: number }[]
      )[0]!.n;
    const seqs = async () =>
      (
        (await db.query(
          `SELECT seq FROM webhooks.change_log WHERE account_id = 'acc_retention' ORDER BY seq`,
        )) as { seq: string }[]
      ).map((r) => r.seq);
    const pruned = async () =>
      (await s.app.get(Registry).getSingleMetric('webhook_matcher_change_log_pruned_total')!.get())
        .values[0]?.value ?? 0;
    const old = await change(retentionMs + MIN);
    const older = await change(retentionMs + 60 * MIN);
    const young = await change(retentionMs - MIN);
    expect(await seqs()).toEqual([old, older, young]);
    const rows = await count();
    const prunedBefore = await pruned();

    expect(await s.app.get(ChangeLogRetention).prune()).toBe(2);
    expect(await seqs()).toEqual([young]);
    // Every other recent row stays.
    expect(await count()).toBe(rows - 2);
    expect(await pruned()).toBe(prunedBefore + 2);
    expect(await s.app.get(ChangeLogRetention).prune()).toBe(0);
  });

  it('deletes replay claims asked for before the retention with the attempts, keeps later ones', async () => {
    const id = await create();
    const retention = s.config.DELIVERY_LOG_RETENTION_DAYS * 24 * 60 * MIN;
    const now = s.clock.now().getTime();
    const db = s.app.get(DataSource);
    const claim = (eventId: string, at: number) =>
      db.query(
        `INSERT INTO webhooks.delivery_replays
           (webhook_id, event_id, phase, given_up_seq, job_id, requested_at)
         VALUES ($1, $2, 'unconfirmed', 1, $3, $4)`,
        [id, eventId, `${id}:${eventId}:unconfirmed:replay-x`, new Date(at)],
      );
    const OLD = `ev_${'e1'.padStart(32, '0')}`;
    const NEW = `ev_${'e2'.padStart(32, '0')}`;
    await claim(OLD, now - retention - MIN);
    await claim(NEW, now - retention + MIN);
    const left = async () =>
      (
        (await db.query(
          'SELECT event_id FROM webhooks.delivery_replays WHERE webhook_id = $1 ORDER BY event_id',
          [id],
        )) as { event_id: string }[]
      ).map((r) => r.event_id);
    expect(await left()).toEqual([OLD, NEW]);
    expect(await s.app.get(DeliveryLogRetention).prune()).toBeGreaterThanOrEqual(1);
    expect(await left()).toEqual([NEW]);
  });

  it('feeds the auto-pause decision: 30 min of failures with ≥ 20 attempts → paused_auto', async () => {
    const id = await create();
    await attempt(id, { outcome: 'failure' });
    s.clock.advance(30 * MIN);
    for (let i = 0; i < 18; i += 1) await attempt(id, { outcome: 'failure' });
    await eventually(async () => (await stats(id)).failed_total === 19);
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.status).toBe('active');
    await attempt(id, { outcome: 'skipped_breaker_open', errorClass: 'breaker_open' });
    await eventually(
      async () => (await s.call('GET', `/webhooks/${id}`, key)).body.status === 'paused_auto',
    );
  });

  it('a success resets the failing run', async () => {
    const id = await create();
    await attempt(id, { outcome: 'failure' });
    s.clock.advance(30 * MIN);
    await attempt(id, { outcome: 'success' });
    for (let i = 0; i < 20; i += 1) await attempt(id, { outcome: 'failure' });
    await eventually(async () => (await stats(id)).failed_total === 21);
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.status).toBe('active');
  });

  it('a resume from paused_auto starts a new failing run: the next auto-pause needs 30 new minutes of failures', async () => {
    const id = await create();
    const statusOf = async () => (await s.call('GET', `/webhooks/${id}`, key)).body.status;
    await attempt(id, { outcome: 'failure' });
    s.clock.advance(30 * MIN);
    for (let i = 0; i < 19; i += 1) await attempt(id, { outcome: 'failure' });
    await eventually(async () => (await statusOf()) === 'paused_auto');

    // The owner fixed the endpoint and resumes (spec: "paused_auto | resume | endpoint fixed first").
    s.clock.advance(MIN);
    const resumedAt = s.clock.now().getTime();
    const resumed = await s.call('POST', `/webhooks/${id}/resume`, key);
    expect(resumed.body.status).toBe('active');
    // An outcome of an attempt made before the resume, arriving after it, starts no run.
    await attempt(id, { outcome: 'failure', at: new Date(resumedAt - 10_000).toISOString() });
    await eventually(async () => (await stats(id)).failed_total === 21);
    expect(await statusOf()).toBe('active');
    // Failures after the resume: 20 of them over 29 minutes are not yet 30 minutes of failing.
    s.clock.advance(1_000);
    for (let i = 0; i < 20; i += 1) await attempt(id, { outcome: 'skipped_breaker_open' });
    s.clock.advance(29 * MIN);
    await attempt(id, { outcome: 'failure' });
    await eventually(async () => (await stats(id)).failed_total === 42);
    expect(await statusOf()).toBe('active');
    // 30 minutes after the first failure that followed the resume: paused again.
    s.clock.advance(MIN);
    await attempt(id, { outcome: 'failure' });
    await eventually(async () => (await statusOf()) === 'paused_auto');
  });

  it('a dropped queued event is listed with its reason, counted nowhere, and feeds no decision', async () => {
    const id = await create();
    const jobId = deliveryJobId(id, 'ev_dropped', 'unconfirmed');
    await attempt(id, {
      id: `${jobId}:dropped`,
      eventId: 'ev_dropped',
      outcome: 'dropped',
      dropReason: 'auto_paused',
      error: 'dropped: auto_paused',
      billed: false,
      final: true,
      payload: payload(id, 'ev_dropped'),
    });
    const listed = async () => (await s.call('GET', `/webhooks/${id}/deliveries`, key)).body;
    await eventually(async () => (await listed()).items.length === 1);
    expect((await listed()).items).toEqual([
      expect.objectContaining({
        event_id: 'ev_dropped',
        attempt: 1,
        // A drop is not an attempt: no slot, and what is left of the budget is not known here.
        event_attempt: null,
        event_attempts_left: null,
        outcome: 'dropped',
        error_class: 'auto_paused',
        error: 'dropped: auto_paused',
        billed: false,
        final: true,
      }),
    ]);
    expect(deliveriesPage.safeParse(await listed()).error).toBeUndefined();
    expect(await stats(id)).toEqual({
      delivered_total: 0,
      failed_total: 0,
      rate_limited_total: 0,
      last_delivered_at: null,
    });
    expect(deliveryStats.safeParse(await stats(id)).error).toBeUndefined();
    expect((await s.call('GET', `/webhooks/${id}`, key)).body.status).toBe('active');
  });

  it("shows each attempt's slot of its event's 8 and the attempts left, across the event's phases", async () => {
    const id = await create();
    const eventId = `ev_${'c3'.padStart(32, '0')}`;
    const phaseAttempt = (
      phase: DeliveryHealth['phase'],
      n: number,
      eventAttempt: number | undefined,
      outcome: DeliveryHealth['outcome'] = 'failure',
    ) =>
      attempt(id, {
        id: `${deliveryJobId(id, eventId, phase)}:${n}`,
        eventId,
        phase,
        attempt: n,
        ...(eventAttempt === undefined ? {} : { eventAttempt }),
        outcome,
        ...(outcome === 'success' ? { statusCode: 200, final: true } : {}),
      });
    // The unconfirmed delivery fails slots 1 and 2 and succeeds at 3; the confirmed one then
    // fails its attempts 1 and 2, the event's slots 4 and 5. One attempt of the event made
    // before the worker kept the budget carries no slot.
    await phaseAttempt('unconfirmed', 1, 1);
    await phaseAttempt('unconfirmed', 2, 2);
    await phaseAttempt('unconfirmed', 3, 3, 'success');
    await phaseAttempt('confirmed', 1, 4);
    await phaseAttempt('confirmed', 2, 5);
    const legacy = `ev_${'d4'.padStart(32, '0')}`;
    await attempt(id, { eventId: legacy, outcome: 'failure' });
    const page = async (query: string) =>
      (await s.call('GET', `/webhooks/${id}/deliveries?${query}`, key)).body;
    await eventually(async () => (await page(`event_id=${eventId}`)).items.length === 5);
    const ofEvent = await page(`event_id=${eventId}`);
    expect(deliveriesPage.safeParse(ofEvent).error).toBeUndefined();
    const rows = (
      ofEvent.items as Array<{
        phase: string;
        attempt: number;
        outcome: string;
        event_attempt: number | null;
        event_attempts_left: number | null;
      }>
    )
      .map((i) => [i.phase, i.attempt, i.outcome, i.event_attempt, i.event_attempts_left])
      .sort((a, b) => Number(a[3]) - Number(b[3]));
    expect(rows).toEqual([
      ['unconfirmed', 1, 'failure', 1, 7],
      ['unconfirmed', 2, 'failure', 2, 6],
      ['unconfirmed', 3, 'success', 3, 5],
      ['confirmed', 1, 'failure', 4, 4],
      ['confirmed', 2, 'failure', 5, 3],
    ]);
    // The failed-attempt log (no event_id) carries the same fields; the attempt without a slot
    // answers null for both.
    await eventually(async () => (await page('limit=10')).items.length === 5);
    const failed = await page('limit=10');
    expect(deliveriesPage.safeParse(failed).error).toBeUndefined();
    expect(failed.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event_id: eventId,
          phase: 'confirmed',
          attempt: 2,
          event_attempt: 5,
          event_attempts_left: 3,
        }),
        expect.objectContaining({
          event_id: legacy,
          attempt: 1,
          event_attempt: null,
          event_attempts_left: null,
        }),
      ]),
    );
  });

  async function jobsOnStream(): Promise<DeliveryJob[]> {
    const jsm = await jetstreamManager(nc);
    const name = `${s.natsPrefix}_WEBHOOK`;
    const consumer = await jsm
      .jetstream()
      .consumers.get(name, { deliver_policy: DeliverPolicy.All });
    const out: DeliveryJob[] = [];
    for (;;) {
      const msg = await consumer.next({ expires: 1_000 });
      if (msg === null) break;
      if (msg.subject.startsWith(`${s.natsPrefix}.webhook.delivery.requested.v1.`))
        out.push(msg.json());
      if (msg.info.pending === 0) break;
    }
    return out;
  }

  it('replays a given-up event and a block range as new jobs (fresh attempts); 409 unless active', async () => {
    const id = await create();
    const gaveUp = await attempt(id, {
      outcome: 'failure',
      attempt: 8,
      final: true,
      eventId: GIVEN_UP,
      payload: payload(id, GIVEN_UP, 200),
    });
    await attempt(id, {
      outcome: 'failure',
      attempt: 8,
      final: true,
      eventId: OTHER,
      payload: payload(id, OTHER, 300),
    });
    await eventually(async () => (await stats(id)).failed_total === 2);
    const one = await s.call('POST', `/webhooks/${id}/deliveries/${GIVEN_UP}/replay`, key);
    expect(one).toEqual({ status: 202, body: { replayed: 1, event_ids: [GIVEN_UP] } });
    expect(replayResponse.safeParse(one.body).error).toBeUndefined();
    const range = await s.call('POST', `/webhooks/${id}/replay`, key, { from: 250, to: '0x200' });
    expect(range.body).toEqual({ replayed: 1, event_ids: [OTHER] });
    expect(replayResponse.safeParse(range.body).error).toBeUndefined();
    // Both given-up attempts in the log (recorded in parallel: either order).
    const log = await s.call('GET', `/webhooks/${id}/deliveries`, key);
    expect(log.body.items).toHaveLength(2);
    expect(log.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_id: OTHER, attempt: 8, final: true }),
        expect.objectContaining({ event_id: GIVEN_UP, attempt: 8, final: true }),
      ]),
    );
    expect(deliveriesPage.safeParse(log.body).error).toBeUndefined();
    const jobs = (await jobsOnStream()).filter((j) => j.webhookId === id);
    expect(jobs).toHaveLength(2);
    expect(jobs[0]).toMatchObject({
      eventId: gaveUp.eventId,
      attempt: 1,
      test: false,
      payload: gaveUp.payload,
    });
    expect(jobs[0]!.id).toMatch(new RegExp(`^${id}:${GIVEN_UP}:unconfirmed:replay-`));

    // The replay delivered: the event is no longer given up (QA: it was replayed, and billed,
    // again and again), by its id nor in a range.
    s.clock.advance(1_000);
    await attempt(id, {
      id: `${jobs[0]!.id}:1`,
      outcome: 'success',
      statusCode: 200,
      final: true,
      eventId: GIVEN_UP,
      payload: gaveUp.payload,
    });
    await eventually(async () => (await stats(id)).delivered_total === 1);
    const again = await s.call('POST', `/webhooks/${id}/deliveries/${GIVEN_UP}/replay`, key);
    expect([again.status, again.body.error]).toEqual([404, 'not_found']);
    // OTHER's replay has no outcome yet: still running, so left out too.
    const rangeAgain = await s.call('POST', `/webhooks/${id}/replay`, key, { from: 1, to: 1000 });
    expect(rangeAgain.body).toEqual({ replayed: 0, event_ids: [] });

    // Both phases of an event given up: replayed in the order they are sent, unconfirmed first
    // (QA: 'confirmed' sorted first and reached the receiver first).
    const BOTH = `ev_${'d4'.padStart(32, '0')}`;
    for (const phase of ['confirmed', 'unconfirmed'] as const)
      await attempt(id, {
        id: `${deliveryJobId(id, BOTH, phase)}:8`,
        phase,
        outcome: 'failure',
        attempt: 8,
        final: true,
        eventId: BOTH,
        payload: payload(id, BOTH, 400),
      });
    await eventually(async () => (await stats(id)).failed_total === 4);
    const both = await s.call('POST', `/webhooks/${id}/deliveries/${BOTH}/replay`, key);
    expect(both.body).toEqual({ replayed: 2, event_ids: [BOTH] });
    const bothJobs = (await jobsOnStream()).filter((j) => j.eventId === BOTH);
    // Each names the phases of its replay going before it: the worker waits only for those.
    expect(bothJobs.map((j) => [j.phase, j.earlierPhases])).toEqual([
      ['unconfirmed', []],
      ['confirmed', ['unconfirmed']],
    ]);
    expect(jobs.map((j) => j.earlierPhases)).toEqual([[], []]);
    expect(
      (await s.call('POST', `/webhooks/${id}/deliveries/ev_${'c3'.padStart(32, '0')}/replay`, key))
        .status,
    ).toBe(404);
    expect((await s.call('POST', `/webhooks/${id}/replay`, key, { from: 5, to: 1 })).status).toBe(
      400,
    );
    expect((await s.call('POST', `/webhooks/${id}/replay`, other, { from: 1, to: 5 })).status).toBe(
      404,
    );
    await s.call('POST', `/webhooks/${id}/pause`, key);
    const refused = await s.call('POST', `/webhooks/${id}/deliveries/${GIVEN_UP}/replay`, key);
    expect([refused.status, refused.body.error]).toEqual([409, 'webhook_not_active']);
  });

  it('replays a block range in chain order, as the events went out live, not by event id (QA ZZ)', async () => {
    const id = await create();
    // In block 601: two transactions, then two logs (blockActivities' order); one event of 600.
    // Their ids sort the other way round.
    const events: [string, number, Record<string, unknown>][] = [
      [`ev_${'f6'.padStart(32, '0')}`, 600, { transactionIndex: '0x9' }],
      [`ev_${'f5'.padStart(32, '0')}`, 601, { transactionIndex: '0x1' }],
      [`ev_${'f4'.padStart(32, '0')}`, 601, { transactionIndex: '0xa' }],
      [`ev_${'f3'.padStart(32, '0')}`, 601, { transactionIndex: '0x0', logIndex: '0x2' }],
      [`ev_${'f2'.padStart(32, '0')}`, 601, { transactionIndex: '0x1', logIndex: '0x10' }],
    ];
    // Recorded in an order of their own, as outcomes are consumed.
    for (const [eventId, block, raw] of [...events].reverse())
      await attempt(id, {
        outcome: 'failure',
        attempt: 8,
        final: true,
        eventId,
        payload: { ...payload(id, eventId, block), raw: { transactionHash: '0x1', ...raw } },
      });
    await eventually(async () => (await stats(id)).failed_total === events.length);
    const range = await s.call('POST', `/webhooks/${id}/replay`, key, { from: 600, to: 601 });
    expect(range.body).toEqual({ replayed: 5, event_ids: events.map(([eventId]) => eventId) });
    const jobs = (await jobsOnStream()).filter((j) => j.webhookId === id);
    expect(jobs.map((j) => j.eventId)).toEqual(events.map(([eventId]) => eventId));
    // The plan's webhook cap leaves room for the cases after this one.
    expect((await s.call('DELETE', `/webhooks/${id}`, key)).status).toBe(200);
  });

  it('a replay still running holds its event: replayed once across racing requests and replicas, again only once it ends (or its job is gone)', async () => {
    // A second matcher replica on the same database and NATS namespace.
    const replica = await createHttpApp(
      AppModule.forRoot(s.config, pino({ level: 'silent' }), { clock: s.clock }),
      { logger: pino({ level: 'silent' }) },
    );
    await replica.init();
    await replica.getHttpAdapter().getInstance().ready();
    const onReplica = async (path: string, body: unknown = {}) => {
      const r = await replica.inject({
        method: 'POST',
        url: `/api/v1${path}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        payload: JSON.stringify(body),
      });
      return { status: r.statusCode, body: r.json() as Record<string, unknown> };
    };
    try {
      const id = await create();
      const EV = `ev_${'e5'.padStart(32, '0')}`;
      const gaveUp = await attempt(id, {
        outcome: 'failure',
        attempt: 8,
        final: true,
        eventId: EV,
        payload: payload(id, EV, 600),
      });
      await eventually(async () => (await stats(id)).failed_total === 1);
      const byId = `/webhooks/${id}/deliveries/${EV}/replay`;
      // QA: replays within the same moment, on one replica and on two.
      const racing = await Promise.all([
        s.call('POST', byId, key, {}),
        onReplica(byId),
        s.call('POST', byId, key, {}),
        onReplica(byId),
      ]);
      expect(racing.map((a) => a.status).sort()).toEqual([202, 404, 404, 404]);
      expect(racing.find((a) => a.status === 202)!.body).toEqual({ replayed: 1, event_ids: [EV] });
      const jobsOf = async () => (await jobsOnStream()).filter((j) => j.eventId === EV);
      const [job] = await jobsOf();
      expect(await jobsOf()).toHaveLength(1);

      // The replay's first attempt fails (the receiver answers 503) and it retries: still
      // running, so not given up (QA: a replay 2 s later started a second run).
      s.clock.advance(1_000);
      await attempt(id, {
        id: `${job!.id}:1`,
        outcome: 'failure',
        statusCode: 503,
        attempt: 1,
        final: false,
        eventId: EV,
        payload: gaveUp.payload,
      });
      await eventually(async () => (await stats(id)).failed_total === 2);
      s.clock.advance(1_000);
      const again = await s.call('POST', byId, key, {});
      expect([again.status, again.body.error]).toEqual([404, 'not_found']);
      expect((await onReplica(byId)).status).toBe(404);
      const range = await s.call('POST', `/webhooks/${id}/replay`, key, { from: 1, to: 1000 });
      expect([range.status, range.body]).toEqual([202, { replayed: 0, event_ids: [] }]);
      expect(await jobsOf()).toHaveLength(1);

      // The replay run gives up (its 8th attempt, final): given up again, replayable once more.
      s.clock.advance(MIN);
      await attempt(id, {
        id: `${job!.id}:8`,
        outcome: 'failure',
        statusCode: 503,
        attempt: 8,
        final: true,
        eventId: EV,
        payload: gaveUp.payload,
      });
      await eventually(async () => (await stats(id)).failed_total === 3);
      const third = await onReplica(`/webhooks/${id}/replay`, { from: 1, to: 1000 });
      expect([third.status, third.body]).toEqual([202, { replayed: 1, event_ids: [EV] }]);
      expect(await jobsOf()).toHaveLength(2);
      expect((await s.call('POST', byId, key, {})).status).toBe(404);

      // A replay whose job never ran holds the event as long as the WEBHOOK stream keeps jobs.
      s.clock.advance(REPLAY_HOLD_MS - MIN);
      expect((await s.call('POST', byId, key, {})).status).toBe(404);
      s.clock.advance(2 * MIN);
      expect(await s.call('POST', byId, key, {})).toEqual({
        status: 202,
        body: { replayed: 1, event_ids: [EV] },
      });
    } finally {
      await replica.close();
    }
  });
});
