import { randomBytes } from 'node:crypto';
import {
  unpackAccounts,
  USAGE_PART_RETENTION_MS,
  usageFlushId,
  type DeliveryJob,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { dailyWindow } from '@meridian/plans';
import { DAY, MINUTE, SECOND } from '@meridian/time';
import { DELIVERY_RETRY_WAITS_MS, verifyXSignature } from '@meridian/webhooks';
import { Webhook } from 'standardwebhooks';
import type { DeliveryRuntime } from '../delivery.runtime';
import { Receiver, WorkerHarness, stillFalse, until } from '../testing/worker-harness';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

describe('delivery-worker on real NATS, Postgres and an HTTP receiver', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();
  let runtime: DeliveryRuntime;

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
    runtime = await h.start({
      // A fake DNS (named so) for names that would need the internet; everything else is real.
      resolver: async (hostname) => {
        if (hostname === 'private.example.com') return [{ address: '10.0.0.7', family: 4 }];
        if (hostname === 'receiver.example.com') return [{ address: '127.0.0.1', family: 4 }];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      },
    });
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  it('delivers once, signed so standardwebhooks and a hand-written t=,v1= check verify; bills 25 CU', async () => {
    const [current, previous] = [secret(), secret()];
    await h.putWebhook('wh_ok', `${receiver.url}/ok`, [current, previous], 'active', 'acc_ok');
    const job = await h.publishJob('wh_ok', { accountId: 'acc_ok' });
    const [got] = await until(() => receiver.at('/ok').length === 1 && receiver.at('/ok'));
    expect(JSON.parse(got!.body)).toEqual(job.payload);
    const headers = got!.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(job.id);
    // The harness clock started at the real time and was not moved: timestamps are current.
    expect(() => new Webhook(current).verify(got!.body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(got!.body, headers)).not.toThrow();
    const nowS = Math.floor(h.clock.now().getTime() / 1000);
    expect(verifyXSignature(headers['x-signature']!, got!.body, current, nowS)).toBe(true);
    expect(verifyXSignature(headers['x-signature']!, got!.body, previous, nowS)).toBe(true);
    expect(headers['x-signature']!.match(/v1=/g)).toHaveLength(2);

    const health = await until(async () => (await h.health()).find((e) => e.id === `${job.id}:1`));
    expect(health).toMatchObject({
      outcome: 'success',
      billed: true,
      final: true,
      statusCode: 200,
    });
    expect(await until(async () => (await h.billedCu('acc_ok')) === 25 && 25)).toBe(25);
    await stillFalse(() => receiver.at('/ok').length > 1);
  });

  it('honours the schedule on a failing receiver (fake clock), gives up after 8 and bills 8 x 25', async () => {
    receiver.answer('/down', 500);
    await h.putWebhook('wh_down', `${receiver.url}/down`, [secret()], 'active', 'acc_down');
    const job = await h.publishJob('wh_down', { accountId: 'acc_down' });
    // The attempt is over once its row has an outcome (the receiver sees it a moment earlier).
    const recorded = (n: number) =>
      until(async () => {
        const rows = await h.attemptRows(job.id);
        return rows.length === n && rows.every((r) => r.outcome !== null);
      });
    await recorded(1);
    for (let attempt = 1; attempt <= 7; attempt += 1) {
      const wait = DELIVERY_RETRY_WAITS_MS[attempt - 1]!;
      h.clock.advance(wait - SECOND);
      await stillFalse(() => receiver.at('/down').length > attempt, 300);
      h.clock.advance(SECOND);
      await recorded(attempt + 1);
    }
    h.clock.advance(60 * MINUTE);
    await stillFalse(() => receiver.at('/down').length > 8, 300);
    const rows = await h.attemptRows(job.id);
    expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(
      rows.every((r) => r.outcome === 'failure' && r.billed && r.error_class === 'http_status'),
    ).toBe(true);
    const events = await until(async () => {
      const all = (await h.health()).filter((e) => e.webhookId === 'wh_down');
      return all.length === 8 && all;
    });
    expect(events.filter((e) => e.final)).toHaveLength(1);
    expect(events.find((e) => e.final)).toMatchObject({ attempt: 8, payload: job.payload });
    expect(events[0]!.responseBody).toBe('answer 500 for /down');
    expect(await until(async () => (await h.billedCu('acc_down')) === 200 && 200)).toBe(200);
  });

  it('attempts one event at most 8 times across its phases, in order: both phases to a failing receiver make 8 requests (none confirmed), 200 CU, the confirmed one given up unsent', async () => {
    receiver.answer('/both', 500);
    await h.putWebhook('wh_both', `${receiver.url}/both`, [secret()], 'active', 'acc_both');
    const eventId = `ev_both_${h.prefix}`;
    const first = await h.publishJob('wh_both', { accountId: 'acc_both', eventId });
    const second = await h.publishJob('wh_both', {
      accountId: 'acc_both',
      eventId,
      phase: 'confirmed',
    });
    for (let slot = 1; slot <= 8; slot += 1) {
      await until(async () => {
        const rows = await h.attemptRows(first.id);
        return rows.length === slot && rows.every((r) => r.outcome !== null);
      });
      // The confirmed phase waits while the unconfirmed one fails: no row, no request.
      expect(await h.attemptRows(second.id)).toEqual([]);
      if (slot < 8) h.clock.advance(DELIVERY_RETRY_WAITS_MS[slot - 1]!);
    }
    const finals = await until(async () => {
      const all = (await h.health()).filter((e) => e.webhookId === 'wh_both' && e.final);
      return all.length === 2 && all;
    });
    expect(finals.find((e) => e.phase === 'unconfirmed')).toMatchObject({
      attempt: 8,
      outcome: 'failure',
    });
    expect(finals.find((e) => e.phase === 'confirmed')).toMatchObject({
      outcome: 'dropped',
      dropReason: 'attempts_spent',
      billed: false,
      error: "given up: the event's 8 attempts are spent (by all its deliveries)",
      payload: second.payload,
    });
    const got = receiver.at('/both');
    expect(got).toHaveLength(8);
    expect(got.every((r) => JSON.parse(r.body).confirmed === false)).toBe(true);
    expect(await until(async () => (await h.billedCu('acc_both')) === 200 && 200)).toBe(200);
    h.clock.advance(60 * MINUTE);
    await stillFalse(() => receiver.at('/both').length > 8, 300);
    expect(await h.attemptRows(second.id)).toEqual([]);
    expect(await h.billedCu('acc_both')).toBe(200);
  });

  it('an outage shorter than the schedule delivers both phases after it, in order (the confirmed one at once, as the event’s next slot)', async () => {
    receiver.answer('/outage', 500);
    await h.putWebhook('wh_outage', `${receiver.url}/outage`, [secret()], 'active', 'acc_out');
    const eventId = `ev_outage_${h.prefix}`;
    const first = await h.publishJob('wh_outage', { accountId: 'acc_out', eventId });
    const second = await h.publishJob('wh_outage', {
      accountId: 'acc_out',
      eventId,
      phase: 'confirmed',
    });
    for (let slot = 1; slot <= 3; slot += 1) {
      await until(async () => {
        const rows = await h.attemptRows(first.id);
        return rows.length === slot && rows.every((r) => r.outcome !== null);
      });
      if (slot === 3) receiver.answer('/outage', 200);
      h.clock.advance(DELIVERY_RETRY_WAITS_MS[slot - 1]!);
    }
    await until(() => receiver.at('/outage').length === 5);
    expect(receiver.at('/outage').map((r) => JSON.parse(r.body).confirmed)).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
    // The receiver answered the fifth before the worker recorded its outcome: wait for it.
    const slots = await until(async () => {
      const rows: { job_id: string; attempt: number; event_attempt: number; outcome: string }[] =
        await h.dataSource.query(
          `SELECT job_id, attempt, event_attempt, outcome FROM deliveries.attempts
            WHERE job_id = ANY($1) ORDER BY event_attempt`,
          [[first.id, second.id]],
        );
      return rows.length === 5 && rows.every((r) => r.outcome !== null) && rows;
    });
    expect(slots.map((r) => [r.job_id, r.attempt, r.event_attempt, r.outcome])).toEqual([
      [first.id, 1, 1, 'failure'],
      [first.id, 2, 2, 'failure'],
      [first.id, 3, 3, 'failure'],
      [first.id, 4, 4, 'success'],
      [second.id, 1, 5, 'success'],
    ]);
    expect(await until(async () => (await h.billedCu('acc_out')) === 125 && 125)).toBe(125);
  });

  it('opens the breaker after 20 failed attempts: skips are failed, not sent, not billed; probes after 5 min', async () => {
    receiver.answer('/flaky', 503);
    await h.putWebhook('wh_flaky', `${receiver.url}/flaky`, [secret()], 'active', 'acc_flaky');
    for (let i = 0; i < 20; i += 1) await h.publishJob('wh_flaky', { accountId: 'acc_flaky' });
    await until(() => receiver.at('/flaky').length === 20);
    await until(
      async () => (await h.health()).filter((e) => e.webhookId === 'wh_flaky').length === 20,
    );
    const skipped = await h.publishJob('wh_flaky', { accountId: 'acc_flaky' });
    const skip = await until(async () =>
      (await h.health()).find((e) => e.id === `${skipped.id}:1`),
    );
    expect(skip).toMatchObject({
      outcome: 'skipped_breaker_open',
      billed: false,
      errorClass: 'breaker_open',
    });
    expect(receiver.at('/flaky')).toHaveLength(20);
    // 5 min later one probe goes out; the endpoint is fixed, so it closes the breaker.
    receiver.answer('/flaky', 200);
    h.clock.advance(5 * MINUTE);
    await until(() => receiver.at('/flaky').length >= 21);
    // The moved clock also made the failed jobs' next attempts due, so attempts go on for a
    // moment: each look reads the billed attempts and the ledger together, until they agree.
    const billedAttempts = async () =>
      (await h.health()).filter((e) => e.webhookId === 'wh_flaky' && e.billed).length;
    const agreed = await until(async () => {
      const billed = await billedAttempts();
      return billed >= 21 && (await h.billedCu('acc_flaky')) === billed * 25 && billed;
    }, 60_000);
    expect(agreed).toBeGreaterThanOrEqual(21);
  });

  it('drops jobs of a webhook that is not active, without a request, and records the drop with its reason', async () => {
    await h.putWebhook('wh_paused', `${receiver.url}/paused`, [secret()], 'paused_auto', 'acc_p');
    const job = await h.publishJob('wh_paused', { accountId: 'acc_p' });
    const drop = await until(async () =>
      (await h.health()).find((e) => e.id === `${job.id}:dropped`),
    );
    expect(drop).toMatchObject({
      eventId: job.eventId,
      outcome: 'dropped',
      dropReason: 'auto_paused',
      billed: false,
      final: true,
      payload: job.payload,
    });
    await stillFalse(() => receiver.at('/paused').length > 0);
    expect(await h.attemptRows(job.id)).toEqual([]);
    expect((await h.health()).filter((e) => e.webhookId === 'wh_paused')).toHaveLength(1);
    expect(await h.billedCu('acc_p')).toBe(0);
  });

  it('refuses a name resolving to a private address at send time (failed attempt saying why)', async () => {
    await h.putWebhook(
      'wh_private',
      'https://private.example.com/hook',
      [secret()],
      'active',
      'acc_priv',
    );
    const job = await h.publishJob('wh_private', { accountId: 'acc_priv' });
    const event = await until(async () => (await h.health()).find((e) => e.id === `${job.id}:1`));
    expect(event).toMatchObject({ outcome: 'failure', errorClass: 'refused_address' });
    expect(event.error).toMatch(/10\.0\.0\.7 \(private\)/);
  });

  it('holds deliveries at zero balance, lets them through after a top-up that clears in time', async () => {
    await h.putWebhook('wh_zero', `${receiver.url}/zero`, [secret()], 'active', 'acc_zero');
    await h.putBalance('acc_zero', 'exhausted');
    const job = await h.publishJob('wh_zero', { accountId: 'acc_zero' });
    h.clock.advance(9 * MINUTE);
    await stillFalse(() => receiver.at('/zero').length > 0);
    expect(await h.attemptRows(job.id)).toEqual([]);
    await h.putBalance('acc_zero', 'ok');
    await until(() => receiver.at('/zero').length === 1);
  });

  it('after 10 min at zero, attempts go on the schedule as no_balance failures: not sent, not billed', async () => {
    await h.putWebhook('wh_broke', `${receiver.url}/broke`, [secret()], 'active', 'acc_broke');
    await h.putBalance('acc_broke', 'exhausted');
    const job = await h.publishJob('wh_broke', { accountId: 'acc_broke' });
    h.clock.advance(10 * MINUTE);
    const first = await until(async () => (await h.health()).find((e) => e.id === `${job.id}:1`));
    expect(first).toMatchObject({ outcome: 'failure', errorClass: 'no_balance', billed: false });
    h.clock.advance(DELIVERY_RETRY_WAITS_MS[0]!);
    await until(async () => (await h.attemptRows(job.id)).length === 2);
    expect(receiver.at('/broke')).toHaveLength(0);
    // A test delivery still goes out at zero balance, free.
    const test = await h.publishJob('wh_broke', { accountId: 'acc_broke', test: true });
    await until(() => receiver.at('/broke').length === 1);
    const testEvent = await until(async () =>
      (await h.health()).find((e) => e.id === `${test.id}:1`),
    );
    expect(testEvent).toMatchObject({ outcome: 'success', billed: false, test: true, final: true });
    await stillFalse(() => false, 300);
    expect(await h.billedCu('acc_broke')).toBe(0);
  });

  it('publishes a usage part stored before the compact contract as the v1 part it is (ADR 0105)', async () => {
    const windowStart = '2026-01-01T00:00:00.000Z';
    const id = usageFlushId('dw-before-upgrade', windowStart, 0);
    const body: UsageFlushed = {
      id,
      producerId: 'dw-before-upgrade',
      windowStart,
      windowEnd: '2026-01-01T00:00:01.000Z',
      part: 0,
      parts: 1,
      accounts: [
        {
          kind: 'webhook_delivery',
          accountId: 'acc_old',
          items: [{ webhookId: 'wh_old', attempts: 2, cu: 50 }],
          totalCu: 50,
        },
      ],
    };
    await h.dataSource.query(
      `INSERT INTO deliveries.usage_parts (id, body, created_at) VALUES ($1, $2, now())`,
      [id, JSON.stringify(body)],
    );
    const [sent] = await until(async () => {
      const parts = await h.stored<UsageFlushed>('BILLING', 'billing.usage.flushed.v1.>');
      return parts.length > 0 && parts;
    });
    expect(sent).toEqual(body);
    // The worker marks the part published after the stream stored it: the mark follows.
    const publishedAt = await until(async () => {
      const [row] = await h.dataSource.query(
        `SELECT published_at FROM deliveries.usage_parts WHERE id = $1`,
        [id],
      );
      return (row.published_at as Date | null) ?? undefined;
    });
    expect(publishedAt).toBeInstanceOf(Date);
  });

  it('bills attempts made before the 07:30 UTC reset in a window that ends before it (ADR 0108)', async () => {
    // Three attempts around the next reset, billed together after it: the window is cut at the
    // reset by the attempts' start times, not by when the outbox ran.
    const reset = dailyWindow(h.clock.now()).end.getTime();
    h.clock.set(reset + 400);
    await h.dataSource.query(
      `INSERT INTO deliveries.attempts (id, job_id, attempt, account_id, webhook_id, started_at, billed, outcome)
       SELECT 'job_reset:' || n, 'job_reset', n, 'acc_reset', 'wh_reset', to_timestamp(t / 1000.0), true, 'success'
         FROM unnest($1::int[], $2::float8[]) AS a(n, t)`,
      [
        [1, 2, 3],
        [reset - 400, reset - 100, reset + 200],
      ],
    );
    const windows = await until(async () => {
      const parts = await h.stored<UsageFlushedV2>('BILLING', 'billing.usage.flushed.v2.>');
      const mine = parts.flatMap((part) =>
        unpackAccounts(part)
          .filter((a) => a.accountId === 'acc_reset')
          .map((a) => [part.windowStart, part.windowEnd, a.totalCu]),
      );
      return mine.length === 2 && mine;
    });
    expect(windows).toEqual([
      [new Date(reset - 400).toISOString(), new Date(reset - 1).toISOString(), 50],
      // The next window starts at its first attempt.
      [new Date(reset + 200).toISOString(), new Date(reset + 400).toISOString(), 25],
    ]);
  });

  it('deletes a usage part published longer ago than the stream keeps it, and only such parts', async () => {
    const now = h.clock.now().getTime();
    await h.dataSource.query(
      `INSERT INTO deliveries.usage_parts (id, body, created_at, published_at)
       SELECT id, '{}', to_timestamp(t / 1000.0), to_timestamp(t / 1000.0)
         FROM unnest($1::text[], $2::float8[]) AS p(id, t)`,
      [
        ['dw-retention:expired', 'dw-retention:kept'],
        [now - USAGE_PART_RETENTION_MS - 1_000, now - USAGE_PART_RETENTION_MS + 60_000],
      ],
    );
    const left = await until(async () => {
      const rows: { id: string }[] = await h.dataSource.query(
        `SELECT id FROM deliveries.usage_parts WHERE id LIKE 'dw-retention:%'`,
      );
      return rows.length === 1 && rows.map((r) => r.id);
    });
    expect(left).toEqual(['dw-retention:kept']);
  });

  it('forgets a delivered and billed attempt once ATTEMPT_LOG_RETENTION_DAYS old, counted at /metrics', async () => {
    await h.putWebhook('wh_aged', `${receiver.url}/aged`, [secret()], 'active', 'acc_aged');
    const job = await h.publishJob('wh_aged', { accountId: 'acc_aged' });
    expect(await until(async () => (await h.billedCu('acc_aged')) === 25 && 25)).toBe(25);
    const [row] = await h.attemptRows(job.id);
    expect(row).toMatchObject({ attempt: 1, outcome: 'success', billed: true });
    // Older than the retention (8 days by default) by a second, as if the clock had moved on.
    await h.dataSource.query(`UPDATE deliveries.attempts SET started_at = $2 WHERE job_id = $1`, [
      job.id,
      new Date(h.clock.now().getTime() - 8 * DAY - SECOND),
    ]);
    expect(await runtime.retention.prune()).toBe(1);
    expect(await h.attemptRows(job.id)).toEqual([]);
    const metrics = await (await fetch(`${await h.app!.getUrl()}/metrics`)).text();
    expect(metrics).toMatch(/^delivery_attempt_log_pruned_total{service="delivery-worker"} 1$/m);
  });
});

describe('delivery-worker: two workers racing on the phases of one event', () => {
  const h = new WorkerHarness();
  const receiver = new Receiver();

  beforeAll(async () => {
    await h.setup();
    await receiver.start();
    // Two workers (two processes' pools) read the same durable: a job may go to either.
    await h.start();
    await h.start();
  });

  afterAll(async () => {
    await h.teardown();
    await receiver.stop();
  });

  it('never attempt one event more than 8 times, nor bill more than 200 CU for it', async () => {
    const events = [1, 2, 3].map((n) => ({ webhookId: `wh_race${n}`, path: `/race${n}` }));
    const jobs: DeliveryJob[] = [];
    for (const { webhookId, path } of events) {
      receiver.answer(path, 500);
      await h.putWebhook(webhookId, `${receiver.url}${path}`, [secret()], 'active', 'acc_race');
      // Both phases at once: their first deliveries may be claimed by the two workers together.
      for (const phase of ['unconfirmed', 'confirmed', 'removed'] as const)
        jobs.push(
          await h.publishJob(webhookId, {
            accountId: 'acc_race',
            eventId: `ev_${webhookId}`,
            phase,
          }),
        );
    }
    const finals = async () => (await h.health()).filter((e) => e.final).length;
    for (let step = 0; step < 40 && (await finals()) < jobs.length; step += 1) {
      await until(async () =>
        (await Promise.all(jobs.map((j) => h.attemptRows(j.id))))
          .flat()
          .every((r) => r.outcome !== null),
      );
      h.clock.advance(5 * MINUTE);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await finals()).toBe(jobs.length);
    for (const { path } of events) expect(receiver.at(path)).toHaveLength(8);
    const slots: { event_key: string; n: number; max: number }[] = await h.dataSource.query(
      `SELECT event_key, count(*)::int AS n, max(event_attempt) AS max FROM deliveries.attempts
        GROUP BY event_key ORDER BY event_key`,
    );
    expect(slots.map((r) => [r.n, r.max])).toEqual([
      [8, 8],
      [8, 8],
      [8, 8],
    ]);
    expect(await until(async () => (await h.billedCu('acc_race')) === 600 && 600)).toBe(600);
  });
});
