import { randomBytes } from 'node:crypto';
import {
  Consumers,
  Events,
  deliveryJobId,
  type DeliveryHealth,
  type DeliveryJob,
  type WebhookStatusEntry,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { ConsumerRunner, NatsNamespace, type ConsumedMessage } from '@meridian/platform-messaging';
import type { JsMsg } from '@nats-io/jetstream';
import { FakeClock, MINUTE, SECOND } from '@meridian/time';
import { SecretKeyRing } from '@meridian/platform-secrets';
import {
  DELIVERY_RETRY_WAITS_MS,
  DELIVERY_WAIT_LIMIT_MS,
  MAX_DELIVERY_ATTEMPTS,
  verifyXSignature,
} from '@meridian/webhooks';
import type {
  AttemptFinish,
  AttemptRow,
  AttemptStart,
  Claim,
} from '../attempts/attempts.repository';
import { COMPAT_ENDPOINT_LIMITS, EndpointLimits } from '../protection/endpoint-limits';
import type { SendResult } from '../sending/http-sender';
import {
  DeliveryEngine,
  HELD_RETURN_MS,
  earlierDeliveriesOf,
  eventAttemptsKey,
  hostOf,
  type Step,
} from './delivery-engine';
import { deliveryJobsHandler } from './delivery-jobs.consumer';

/**
 * The attempt log in memory, with the repository's claim semantics (a row is claimed once; it
 * takes the next slot of its event, 8 at most: the unique event_key + event_attempt; `busy`
 * while another delivery of the event is in flight, or an earlier one took a slot above the one
 * the caller read).
 */
class MemoryAttempts {
  readonly rows = new Map<string, AttemptRow>();
  /** Slots taken per event. */
  readonly spent = new Map<string, number>();
  /** Attempt id → its event key. */
  private readonly eventOf = new Map<string, string>();

  async latest(jobId: string): Promise<AttemptRow | undefined> {
    return [...this.rows.values()]
      .filter((row) => row.jobId === jobId)
      .sort((a, b) => b.attempt - a.attempt)[0];
  }

  async claim(start: AttemptStart, finish?: AttemptFinish): Promise<Claim> {
    if (this.rows.has(start.id)) return 'lost';
    const slot = (this.spent.get(start.eventKey) ?? 0) + 1;
    if (slot > MAX_DELIVERY_ATTEMPTS) return 'spent';
    const others = [...this.rows.values()].filter(
      (row) => this.eventOf.get(row.id) === start.eventKey && row.jobId !== start.jobId,
    );
    if (
      others.some((row) => row.outcome === null) ||
      others.some(
        (row) =>
          start.earlierJobIds?.includes(row.jobId) && (row.slot ?? 0) > (start.earlierSlot ?? 0),
      )
    )
      return 'busy';
    this.eventOf.set(start.id, start.eventKey);
    this.spent.set(start.eventKey, slot);
    this.rows.set(start.id, {
      id: start.id,
      jobId: start.jobId,
      attempt: start.attempt,
      slot,
      startedAt: start.startedAt,
      billed: start.billed,
      finishedAt: null,
      outcome: null,
      errorClass: null,
      statusCode: null,
      durationMs: null,
      error: null,
      responseBody: null,
    });
    if (finish) await this.finish(start.id, finish);
    return { slot };
  }

  async finish(id: string, finish: AttemptFinish): Promise<void> {
    const row = this.rows.get(id);
    if (!row || row.outcome !== null) return;
    Object.assign(row, {
      outcome: finish.outcome,
      finishedAt: finish.finishedAt,
      errorClass: finish.errorClass ?? null,
      statusCode: finish.statusCode ?? null,
      durationMs: finish.durationMs ?? null,
      error: finish.error ?? null,
      responseBody: finish.responseBody ?? null,
    });
  }

  of(jobId: string): AttemptRow[] {
    return [...this.rows.values()].filter((row) => row.jobId === jobId);
  }
}

/** An endpoint whose requests are answered only when the test says so (a slow endpoint). */
class HeldRequests {
  private readonly pending: Array<(result: SendResult) => void> = [];

  hold(): Promise<SendResult> {
    return new Promise((resolve) => this.pending.push(resolve));
  }

  get count(): number {
    return this.pending.length;
  }

  answerOne(): void {
    this.pending.shift()?.({ ok: true, statusCode: 200, durationMs: 1 });
  }

  answerAll(): void {
    while (this.pending.length > 0) this.answerOne();
  }
}

const secretsKey = randomBytes(32);
const secrets = new SecretKeyRing(secretsKey);
const SLOW = 'https://slow.example.com/hook';
const FAST = 'https://fast.example.net/hook';
/** Answers 500 while `down.on` of its world is set, 200 after. */
const DOWN = 'https://down.example.org/hook';

function world(options: { startGraceMs?: number; accountMaxInFlight?: number } = {}) {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const attempts = new MemoryAttempts();
  const held = new HeldRequests();
  const sent: string[] = [];
  /** The headers of each request, in order. */
  const sentHeaders: Array<Record<string, string>> = [];
  /** The webhook-id (job id) of each request to DOWN, in order. */
  const sentIds: string[] = [];
  const health: DeliveryHealth[] = [];
  /** While set, every health publish fails (the stream did not confirm it). */
  const healthFailure: { error: Error | undefined } = { error: undefined };
  const entries = new Map<string, WebhookStatusEntry>();
  const webhook = (webhookId: string, accountId: string, targetUrl: string) =>
    entries.set(webhookId, {
      webhookId,
      accountId,
      status: 'active',
      version: 1,
      targetUrl,
      secrets: [
        {
          sealed: secrets.seal(`whsec_${randomBytes(24).toString('base64')}`),
          expiresAt: null,
        },
      ],
      updatedAt: clock.now().toISOString(),
    });
  const refused: Array<[string, string | null, string]> = [];
  /** Each wait's reason, as `delivery_waits_total` counts it. */
  const waits: string[] = [];
  const down = { on: true };
  const engine = new DeliveryEngine({
    clock,
    statusOf: (id) => entries.get(id),
    balanceOf: () => undefined,
    attempts,
    send: (url, headers) => {
      sent.push(url);
      sentHeaders.push(headers);
      if (url === DOWN) sentIds.push(headers['webhook-id']!);
      if (url === DOWN && down.on)
        return Promise.resolve({
          ok: false,
          statusCode: 500,
          errorClass: 'http_status',
          error: 'HTTP 500',
          durationMs: 1,
        });
      return url === SLOW || url.includes('slow') ? held.hold() : fastAnswer();
    },
    limits: new EndpointLimits({
      ...COMPAT_ENDPOINT_LIMITS,
      inFlightPerAccount: options.accountMaxInFlight ?? COMPAT_ENDPOINT_LIMITS.inFlightPerAccount,
    }),
    secrets,
    publishHealth: async (h) => {
      if (healthFailure.error) throw healthFailure.error;
      health.push(h);
    },
    recheckMaxMs: 5 * MINUTE,
    ...(options.startGraceMs !== undefined ? { startGraceMs: options.startGraceMs } : {}),
    onSecretRefused: (error, job) => refused.push([error.reason, error.keyId, job.id]),
    onWait: (reason) => waits.push(reason),
  });
  let seq = 0;
  const job = (webhookId: string): DeliveryJob => {
    seq += 1;
    const entry = entries.get(webhookId)!;
    return {
      id: `dj_${webhookId}_${seq}`,
      webhookId,
      accountId: entry.accountId,
      eventId: `ev_${seq}`,
      phase: 'unconfirmed',
      test: false,
      attempt: 1,
      payload: { seq },
      createdAt: clock.now().toISOString(),
    } as unknown as DeliveryJob;
  };
  /** A job of one event's phase, its id as webhook-matcher makes it. */
  const phaseJob = (webhookId: string, eventId: string, phase: DeliveryJob['phase']) =>
    ({
      ...job(webhookId),
      id: deliveryJobId(webhookId, eventId, phase),
      eventId,
      phase,
    }) as DeliveryJob;
  const setStatus = (webhookId: string, status: WebhookStatusEntry['status']) =>
    entries.set(webhookId, { ...entries.get(webhookId)!, status });
  /** Paused as `from` and active again now, as webhook-matcher publishes it (`reactivated`). */
  const pauseAndResume = (
    webhookId: string,
    from: NonNullable<WebhookStatusEntry['reactivated']>['from'],
  ) => {
    setStatus(webhookId, from);
    entries.set(webhookId, {
      ...entries.get(webhookId)!,
      status: 'active',
      reactivated: { at: clock.now().toISOString(), from },
    });
  };
  const setSealed = (webhookId: string, sealed: string) =>
    entries.set(webhookId, { ...entries.get(webhookId)!, secrets: [{ sealed, expiresAt: null }] });
  return {
    clock,
    entries,
    sentHeaders,
    attempts,
    held,
    sent,
    health,
    healthFailure,
    engine,
    webhook,
    job,
    phaseJob,
    down,
    sentIds,
    setStatus,
    pauseAndResume,
    setSealed,
    refused,
    waits,
  };
}

const fastAnswer = async (): Promise<SendResult> => ({ ok: true, statusCode: 204, durationMs: 1 });

/** Lets the engine's awaited repository calls run, so held sends are really in flight. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Brings `job` back as the consumer does after each put-back while it waits `reason` (the clock
 * stands for the delays), until the 10-minute busy rule ends the wait; asserts it took that long,
 * backing off (tens of looks, not one per 250 ms), and nothing was attempted meanwhile.
 */
async function waitOutBusy(
  w: ReturnType<typeof world>,
  job: DeliveryJob,
  first: Awaited<ReturnType<DeliveryEngine['handle']>>,
  reason: 'endpoint_busy' | 'account_busy',
  started = w.clock.now().getTime(),
) {
  let step = first;
  let looks = 1;
  while (step.action === 'wait' && step.reason === reason) {
    expect(w.attempts.of(job.id)).toEqual([]);
    w.clock.advance(Math.max(step.ms, 1));
    step = await w.engine.handle(job);
    looks += 1;
  }
  const waited = w.clock.now().getTime() - started;
  expect(waited).toBeGreaterThanOrEqual(DELIVERY_WAIT_LIMIT_MS);
  expect(waited).toBeLessThan(DELIVERY_WAIT_LIMIT_MS + 15 * SECOND);
  expect(looks).toBeLessThan(100);
  return step;
}

describe('DeliveryEngine: waiting for concurrency or rate (FakeClock)', () => {
  it('a job over the endpoint’s 10 in flight waits: no attempt row, no request, no health, no bill', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', SLOW);
    const inFlight = Array.from({ length: 10 }, () => w.engine.handle(w.job('wh_a')));
    await settle();
    expect(w.held.count).toBe(10);

    const eleventh = w.job('wh_a');
    const step = await w.engine.handle(eleventh);
    expect(step).toMatchObject({ action: 'wait', reason: 'endpoint_busy' });
    expect(w.attempts.of(eleventh.id)).toEqual([]);
    expect(w.sent).toHaveLength(10);
    expect(w.health.filter((h) => h.eventId === eleventh.eventId)).toEqual([]);

    // One answer frees a place: the waiting job's attempt 1 goes out (waiting cost nothing).
    w.held.answerOne();
    await inFlight[0];
    const next = w.engine.handle(eleventh);
    await settle();
    w.held.answerAll();
    expect(await next).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(eleventh.id).map((r) => [r.attempt, r.outcome, r.billed])).toEqual([
      [1, 'success', true],
    ]);
    await Promise.all(inFlight);
  });

  it('over 200 requests/s to one host (ports and paths alike) waits, then goes at the refilled rate', async () => {
    const w = world();
    const jobs: DeliveryJob[] = [];
    for (let i = 0; i < 201; i += 1) {
      // 201 webhooks on one host under different ports and paths: one destination machine.
      w.webhook(`wh_${i}`, `acc_${i}`, `https://hooks.example.org:${8000 + (i % 3)}/p/${i}`);
      jobs.push(w.job(`wh_${i}`));
    }
    const steps: Step[] = [];
    for (const job of jobs.slice(0, 200)) steps.push(await w.engine.handle(job));
    expect(steps.every((s) => s.action === 'done')).toBe(true);

    const last = jobs[200]!;
    expect(await w.engine.handle(last)).toMatchObject({ action: 'wait', reason: 'endpoint_busy' });
    expect(w.attempts.of(last.id)).toEqual([]);
    expect(w.sent).toHaveLength(200);

    w.clock.advance(10); // 10 ms refill 2 tokens at 200/s
    expect(await w.engine.handle(last)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(last.id)).toHaveLength(1);
  });

  it('after 10 minutes of waiting, one attempt is spent as endpoint_busy: not sent, not billed', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', SLOW);
    const inFlight = Array.from({ length: 10 }, () => w.engine.handle(w.job('wh_a')));
    await settle();
    const waiting = w.job('wh_a');

    const step = await waitOutBusy(w, waiting, await w.engine.handle(waiting), 'endpoint_busy');

    const rows = w.attempts.of(waiting.id);
    expect(rows.map((r) => [r.attempt, r.outcome, r.errorClass, r.billed])).toEqual([
      [1, 'failure', 'endpoint_busy', false],
    ]);
    expect(w.sent).toHaveLength(10);
    expect(w.health.find((h) => h.id === `${waiting.id}:1`)).toMatchObject({
      attempt: 1,
      outcome: 'failure',
      errorClass: 'endpoint_busy',
      billed: false,
    });
    // The schedule goes on: attempt 2 is due 5 s after the spent one.
    expect(step).toEqual({ action: 'wait', ms: 5 * SECOND, reason: 'not_due' });

    w.held.answerAll();
    await Promise.all(inFlight);
  });

  it('an account at its in-flight cap waits (account_busy, unbilled) across its URLs; another account goes; after 10 min the same endpoint_busy rule spends one unsent attempt', async () => {
    const w = world({ accountMaxInFlight: 3 });
    for (let i = 0; i < 4; i += 1) w.webhook(`wh_a${i}`, 'acc_a', `https://slow.example.com/${i}`);
    w.webhook('wh_b', 'acc_b', FAST);
    const inFlight = [0, 1, 2].map((i) => w.engine.handle(w.job(`wh_a${i}`)));
    await settle();
    expect(w.held.count).toBe(3);

    // Its own URL is idle (0 of 10), but its account has 3 in flight.
    const waiting = w.job('wh_a3');
    const started = w.clock.now().getTime();
    const step = await w.engine.handle(waiting);
    expect(step).toEqual({ action: 'wait', ms: 250, reason: 'account_busy' });
    expect(w.waits).toContain('account_busy');
    // Another account is not held up.
    expect(await w.engine.handle(w.job('wh_b'))).toEqual({ action: 'done', reason: 'delivered' });

    await waitOutBusy(w, waiting, step, 'account_busy', started);
    expect(w.attempts.of(waiting.id).map((r) => [r.outcome, r.errorClass, r.billed])).toEqual([
      ['failure', 'endpoint_busy', false],
    ]);
    expect(w.attempts.of(waiting.id)[0]!.error).toBe('account busy for 10 min');
    expect(w.sent.filter((url) => url.startsWith('https://slow.example.com/'))).toHaveLength(3);

    // A released slot lets the account's next job in.
    w.held.answerAll();
    await Promise.all(inFlight);
    const next = w.engine.handle(w.job('wh_a3'));
    await settle();
    expect(w.held.count).toBe(1);
    w.held.answerAll();
    expect(await next).toEqual({ action: 'done', reason: 'delivered' });
  });

  it('a slow endpoint of one customer does not delay another customer’s deliveries', async () => {
    const w = world();
    w.webhook('wh_slow', 'acc_slow', SLOW);
    w.webhook('wh_fast', 'acc_fast', FAST);
    // 30 events for the slow endpoint: 10 go in flight and hang, the other 20 are put back
    // at once (each returns without awaiting anything of the slow endpoint).
    const slow = Array.from({ length: 30 }, () => w.engine.handle(w.job('wh_slow')));
    await settle();
    expect(w.held.count).toBe(10);
    const putBack = await Promise.race([
      Promise.all(slow.slice(10)),
      new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 1_000)),
    ]);
    expect(putBack).not.toBe('blocked');
    expect(
      (putBack as Step[]).every((s) => s.action === 'wait' && s.reason === 'endpoint_busy'),
    ).toBe(true);

    // The other customer's events go out now, with the clock standing still.
    // (10 at a time: the fast endpoint has its own 10 in flight.)
    for (let round = 0; round < 3; round += 1) {
      const fastJobs = Array.from({ length: 10 }, () => w.job('wh_fast'));
      const fastSteps = await Promise.all(fastJobs.map((job) => w.engine.handle(job)));
      expect(fastSteps.every((s) => s.action === 'done' && s.reason === 'delivered')).toBe(true);
    }
    expect(w.sent.filter((url) => url === FAST)).toHaveLength(30);
    expect(w.held.count).toBe(10);

    w.held.answerAll();
    await Promise.all(slow.slice(0, 10));
  });
});

describe('DeliveryEngine: queued events of a webhook that is no longer active', () => {
  it.each([
    ['paused_auto', 'auto_paused'],
    ['paused_no_balance', 'no_balance'],
    ['paused', 'owner_paused'],
  ] as const)(
    'status %s: the job is dropped and the drop recorded once (reason %s), not sent, not billed',
    async (status, reason) => {
      const w = world();
      w.webhook('wh_a', 'acc_a', FAST);
      const job = w.job('wh_a');
      w.setStatus('wh_a', status);
      expect(await w.engine.handle(job)).toEqual({ action: 'done', reason });
      // Brought again (the ack was lost): still dropped, the record is not published twice.
      expect(await w.engine.handle(job)).toEqual({ action: 'done', reason });
      expect(w.sent).toEqual([]);
      expect(w.attempts.of(job.id)).toEqual([]);
      expect(w.health).toEqual([
        expect.objectContaining({
          id: `${job.id}:dropped`,
          eventId: job.eventId,
          attempt: 1,
          outcome: 'dropped',
          dropReason: reason,
          billed: false,
          final: true,
          payload: job.payload,
        }),
      ]);
    },
  );

  it('a job already delivered is done, not dropped, when its webhook is paused afterwards', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const job = w.job('wh_a');
    expect(await w.engine.handle(job)).toEqual({ action: 'done', reason: 'delivered' });
    w.setStatus('wh_a', 'paused');
    expect(await w.engine.handle(job)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.health.map((h) => h.outcome)).toEqual(['success']);
  });

  it('a job that failed attempt 2 is dropped as attempt 3 (the one not made)', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const job = w.job('wh_a');
    for (const n of [1, 2])
      await w.attempts.claim(
        {
          id: `${job.id}:${n}`,
          jobId: job.id,
          attempt: n,
          eventKey: eventAttemptsKey(job),
          accountId: 'acc_a',
          webhookId: 'wh_a',
          startedAt: w.clock.now(),
          billed: true,
        },
        { outcome: 'failure', finishedAt: w.clock.now(), errorClass: 'http_status' },
      );
    w.setStatus('wh_a', 'paused_auto');
    expect(await w.engine.handle(job)).toEqual({ action: 'done', reason: 'auto_paused' });
    expect(w.health.at(-1)).toMatchObject({ outcome: 'dropped', attempt: 3 });
    expect(w.sent).toEqual([]);
  });
});

describe('DeliveryEngine: a pause drops the jobs queued before it, also once resumed', () => {
  /** Attempts 1 and 2 fail (DOWN answers 500); returns the wait before attempt 3. */
  async function twoFailures(w: ReturnType<typeof world>, job: DeliveryJob): Promise<number> {
    expect(await w.engine.handle(job)).toMatchObject({ action: 'wait', reason: 'not_due' });
    w.clock.advance(DELIVERY_RETRY_WAITS_MS[0]!);
    const step = await w.engine.handle(job);
    expect(step).toMatchObject({ action: 'wait', reason: 'not_due' });
    expect(w.sentIds).toEqual([job.id, job.id]);
    return step.action === 'wait' ? step.ms : 0;
  }

  it.each([
    ['paused', 'owner_paused'],
    ['paused_plan', 'plan_paused'],
    ['paused_auto', 'auto_paused'],
    ['paused_no_balance', 'no_balance'],
  ] as const)(
    'paused (%s) and resumed between attempts 2 and 3: attempt 3 is not made, the job is dropped (%s), not sent, not billed (QA "flip")',
    async (from, reason) => {
      const w = world();
      w.webhook('wh_a', 'acc_a', DOWN);
      const job = w.job('wh_a');
      const wait = await twoFailures(w, job);
      w.clock.advance(2 * SECOND);
      w.pauseAndResume('wh_a', from);
      w.down.on = false;
      w.clock.advance(wait);
      expect(await w.engine.handle(job)).toEqual({ action: 'done', reason });
      expect(await w.engine.handle(job)).toEqual({ action: 'done', reason });
      expect(w.sentIds).toEqual([job.id, job.id]);
      expect(w.attempts.of(job.id).map((row) => [row.attempt, row.billed])).toEqual([
        [1, true],
        [2, true],
      ]);
      expect(w.health.map((h) => [h.outcome, h.attempt, h.billed, h.dropReason])).toEqual([
        ['failure', 1, true, undefined],
        ['failure', 2, true, undefined],
        ['dropped', 3, false, reason],
      ]);
      expect(w.health.at(-1)).toMatchObject({ final: true, payload: job.payload });
    },
  );

  it('a job queued after the resume is delivered; one that was delivered before the pause stays delivered', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const before = w.job('wh_a');
    expect(await w.engine.handle(before)).toEqual({ action: 'done', reason: 'delivered' });
    w.clock.advance(MINUTE);
    w.pauseAndResume('wh_a', 'paused');
    expect(await w.engine.handle(before)).toEqual({ action: 'done', reason: 'delivered' });
    const after = w.job('wh_a');
    expect(await w.engine.handle(after)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.health.map((h) => [h.outcome, h.eventId])).toEqual([
      ['success', before.eventId],
      ['success', after.eventId],
    ]);
  });

  it('an entry without `reactivated` (an older matcher) keeps dropping by the status only', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const job = w.job('wh_a');
    const wait = await twoFailures(w, job);
    w.setStatus('wh_a', 'paused');
    w.setStatus('wh_a', 'active');
    w.down.on = false;
    w.clock.advance(wait);
    expect(await w.engine.handle(job)).toEqual({ action: 'done', reason: 'delivered' });
  });

  it('a test delivery queued before the pause is sent once resumed (the owner asked for it)', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const test = { ...w.job('wh_a'), test: true };
    w.clock.advance(SECOND);
    w.pauseAndResume('wh_a', 'paused');
    expect(await w.engine.handle(test)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.health).toEqual([expect.objectContaining({ outcome: 'success', billed: false })]);
  });
});

describe('8 attempts per event across its deliveries, in order (spec "Webhook deliveries")', () => {
  it('the phases of one event share a budget; a replay is a run of its own', () => {
    const of = (id: string, phase: DeliveryJob['phase']) =>
      eventAttemptsKey({ id, webhookId: 'wh_a', eventId: 'ev_1', phase } as DeliveryJob);
    const unconfirmed = of(deliveryJobId('wh_a', 'ev_1', 'unconfirmed'), 'unconfirmed');
    expect(of(deliveryJobId('wh_a', 'ev_1', 'confirmed'), 'confirmed')).toBe(unconfirmed);
    expect(of(deliveryJobId('wh_a', 'ev_1', 'removed'), 'removed')).toBe(unconfirmed);
    const replay = of(`${deliveryJobId('wh_a', 'ev_1', 'confirmed')}:replay-7`, 'confirmed');
    expect(replay).not.toBe(unconfirmed);
    expect(of(`${deliveryJobId('wh_a', 'ev_1', 'unconfirmed')}:replay-7`, 'unconfirmed')).toBe(
      replay,
    );
  });

  it('a later delivery goes after the earlier ones of its event (same replay stamp)', () => {
    const of = (id: string, phase: DeliveryJob['phase']) =>
      earlierDeliveriesOf({ id, webhookId: 'wh_a', eventId: 'ev_1', phase } as DeliveryJob);
    const id = (phase: DeliveryJob['phase']) => deliveryJobId('wh_a', 'ev_1', phase);
    expect(of(id('unconfirmed'), 'unconfirmed')).toEqual([]);
    expect(of(id('confirmed'), 'confirmed')).toEqual([id('unconfirmed')]);
    expect(of(id('removed'), 'removed')).toEqual([id('unconfirmed'), id('confirmed')]);
    expect(of(`${id('confirmed')}:replay-7`, 'confirmed')).toEqual([
      `${id('unconfirmed')}:replay-7`,
    ]);
  });

  it('the confirmed delivery waits (unsent, unbilled, no row) while the unconfirmed one fails, and goes at once when it succeeds; retries follow the event’s slots', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const first = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const second = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    expect(await w.engine.handle(first, true)).toEqual({
      action: 'wait',
      ms: 5 * SECOND,
      reason: 'not_due',
    });
    // Waiting looks again about when the earlier delivery's next attempt is due.
    expect(await w.engine.handle(second, true)).toEqual({
      action: 'wait',
      ms: 6 * SECOND,
      reason: 'earlier_delivery',
    });
    for (const slot of [2, 3]) {
      w.clock.advance(DELIVERY_RETRY_WAITS_MS[slot - 2]!);
      expect(await w.engine.handle(first)).toMatchObject({ action: 'wait', reason: 'not_due' });
      expect(await w.engine.handle(second)).toMatchObject({
        action: 'wait',
        reason: 'earlier_delivery',
      });
    }
    expect(w.attempts.of(second.id)).toEqual([]);
    expect(w.health.filter((h) => h.phase === 'confirmed')).toEqual([]);
    w.down.on = false;
    w.clock.advance(DELIVERY_RETRY_WAITS_MS[2]!);
    expect(await w.engine.handle(first)).toEqual({ action: 'done', reason: 'delivered' });
    w.down.on = true;
    // The earlier one delivered at slot 4: the confirmed one goes at once, as slot 5 …
    expect(await w.engine.handle(second)).toEqual({
      action: 'wait',
      ms: DELIVERY_RETRY_WAITS_MS[4]!,
      reason: 'not_due',
    });
    // … and, failing, waits what the schedule gives after slot 5 (5 min), not after attempt 1.
    expect(w.attempts.of(second.id).map((r) => [r.attempt, r.slot, r.outcome])).toEqual([
      [1, 5, 'failure'],
    ]);
    expect(w.sentIds).toEqual([first.id, first.id, first.id, first.id, second.id]);
  });

  it('both phases to a failing endpoint: 8 attempts in all (all the unconfirmed one’s), then the confirmed one is given up unsent as attempts_spent', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const first = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const second = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    let step = await w.engine.handle(first, true);
    expect(await w.engine.handle(second, true)).toMatchObject({ reason: 'earlier_delivery' });
    while (step.action === 'wait') {
      w.clock.advance(step.ms);
      step = await w.engine.handle(first);
      expect(await w.engine.handle(second)).toMatchObject({
        action: step.action === 'wait' ? 'wait' : 'done',
      });
    }
    expect(step).toEqual({ action: 'done', reason: 'given_up' });
    expect(await w.engine.handle(second)).toEqual({ action: 'done', reason: 'attempts_spent' });
    expect(w.sentIds).toEqual(Array.from({ length: 8 }, () => first.id));
    const rows = [...w.attempts.rows.values()];
    expect(rows.map((r) => [r.jobId, r.slot, r.billed])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((slot) => [first.id, slot, true]),
    );
    expect(w.health.filter((h) => h.phase === 'confirmed')).toEqual([
      expect.objectContaining({
        outcome: 'dropped',
        dropReason: 'attempts_spent',
        billed: false,
        final: true,
        payload: second.payload,
        error: "given up: the event's 8 attempts are spent (by all its deliveries)",
      }),
    ]);
    expect(w.health.filter((h) => h.final).map((h) => [h.phase, h.outcome])).toEqual([
      ['unconfirmed', 'failure'],
      ['confirmed', 'dropped'],
    ]);
  });

  it('an earlier delivery in flight holds the later one; one with no attempt does not', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', SLOW);
    const first = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const second = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    const inFlight = w.engine.handle(first, true);
    await settle();
    expect(w.held.count).toBe(1);
    expect(await w.engine.handle(second, true)).toEqual({
      action: 'wait',
      ms: SECOND,
      reason: 'earlier_delivery',
    });
    w.held.answerOne();
    expect(await inFlight).toEqual({ action: 'done', reason: 'delivered' });
    const next = w.engine.handle(second);
    await settle();
    w.held.answerOne();
    expect(await next).toEqual({ action: 'done', reason: 'delivered' });

    // Both phases brought at once: the confirmed one does not go while the unconfirmed one is
    // in this worker's hands, before its first attempt's row is there.
    w.webhook('wh_c', 'acc_a', DOWN);
    w.down.on = false;
    const [a, b] = [
      w.phaseJob('wh_c', 'ev_z', 'unconfirmed'),
      w.phaseJob('wh_c', 'ev_z', 'confirmed'),
    ];
    expect(await Promise.all([w.engine.handle(a, true), w.engine.handle(b, true)])).toEqual([
      { action: 'done', reason: 'delivered' },
      { action: 'wait', ms: SECOND, reason: 'earlier_delivery' },
    ]);
    expect(await w.engine.handle(b)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.sentIds).toEqual([a.id, b.id]);

    // No attempt of the unconfirmed phase (dropped, not subscribed, not started): no wait.
    w.webhook('wh_b', 'acc_a', FAST);
    const alone = w.phaseJob('wh_b', 'ev_y', 'confirmed');
    expect(await w.engine.handle(alone, true)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(alone.id).map((r) => [r.attempt, r.slot])).toEqual([[1, 1]]);
  });

  it('one delivery of an event attempts at a time: an earlier one claiming while a later one is in flight waits (the claim says busy); the claim carries what was read of the earlier ones', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', SLOW);
    const unconfirmed = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const confirmed = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    const claims: AttemptStart[] = [];
    const claim = w.attempts.claim.bind(w.attempts);
    w.attempts.claim = (start, finish) => {
      claims.push(start);
      return claim(start, finish);
    };
    // The confirmed delivery first (the unconfirmed one had no attempt: not waited for).
    const inFlight = w.engine.handle(confirmed, true);
    await settle();
    expect(w.held.count).toBe(1);
    expect(await w.engine.handle(unconfirmed, true)).toEqual({
      action: 'wait',
      ms: SECOND,
      reason: 'event_busy',
    });
    expect(w.attempts.of(unconfirmed.id)).toEqual([]);
    expect(w.held.count).toBe(1);
    w.held.answerOne();
    expect(await inFlight).toEqual({ action: 'done', reason: 'delivered' });
    const next = w.engine.handle(unconfirmed);
    await settle();
    w.held.answerOne();
    expect(await next).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(unconfirmed.id).map((r) => r.slot)).toEqual([2]);
    expect(claims.map((c) => [c.jobId, c.earlierJobIds, c.earlierSlot])).toEqual([
      [confirmed.id, [unconfirmed.id], 0],
      [unconfirmed.id, [], 0],
      [unconfirmed.id, [], 0],
    ]);
    // The health event of each attempt carries its slot of the event.
    expect(w.health.map((h) => [h.phase, h.attempt, h.eventAttempt])).toEqual([
      ['confirmed', 1, 1],
      ['unconfirmed', 1, 2],
    ]);
  });

  it('a removal correction waits for the confirmed delivery too; a delivery whose event spent its 8 is given up unsent', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const confirmed = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    const removed = w.phaseJob('wh_a', 'ev_x', 'removed');
    await w.engine.handle(confirmed, true);
    expect(await w.engine.handle(removed, true)).toMatchObject({ reason: 'earlier_delivery' });
    w.attempts.spent.set(eventAttemptsKey(confirmed), MAX_DELIVERY_ATTEMPTS);
    w.clock.advance(5 * SECOND);
    expect(await w.engine.handle(confirmed)).toEqual({ action: 'done', reason: 'attempts_spent' });
    expect(w.sentIds).toEqual([confirmed.id]);
  });

  it('a later delivery waits for an earlier one held before its first attempt (endpoint busy), then follows it (QA)', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', SLOW);
    // The endpoint's 10 places taken by other events.
    const inFlight = Array.from({ length: 10 }, () => w.engine.handle(w.job('wh_a')));
    await settle();
    const unconfirmed = w.phaseJob('wh_a', 'ev_busy', 'unconfirmed');
    const confirmed = w.phaseJob('wh_a', 'ev_busy', 'confirmed');
    expect(await w.engine.handle(unconfirmed, true)).toMatchObject({ reason: 'endpoint_busy' });
    expect(w.attempts.of(unconfirmed.id)).toEqual([]);
    // A place frees: the confirmed one, looking first, does not take it.
    w.held.answerOne();
    await inFlight[0];
    expect(await w.engine.handle(confirmed, true)).toMatchObject({
      action: 'wait',
      reason: 'earlier_delivery',
    });
    expect(w.attempts.of(confirmed.id)).toEqual([]);
    const first = w.engine.handle(unconfirmed);
    await settle();
    w.held.answerAll();
    expect(await first).toEqual({ action: 'done', reason: 'delivered' });
    const second = w.engine.handle(confirmed);
    await settle();
    w.held.answerAll();
    expect(await second).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(confirmed.id).map((r) => r.slot)).toEqual([2]);
    await Promise.all(inFlight);
  });

  it('just after a start, later deliveries wait for an earlier one with no attempt that may be in a stopped predecessor’s hands (QA: kill -9, confirmed 40 s before unconfirmed); removed waits for both', async () => {
    const grace = MINUTE + HELD_RETURN_MS;
    const w = world({ startGraceMs: grace });
    w.webhook('wh_a', 'acc_a', DOWN);
    w.down.on = false;
    const [unconfirmed, confirmed, removed] = (
      ['unconfirmed', 'confirmed', 'removed'] as const
    ).map((phase) => w.phaseJob('wh_a', 'ev_x', phase));
    // The unconfirmed job is still with the dead worker (back after the ack wait).
    for (const later of [confirmed!, removed!])
      expect(await w.engine.handle(later, true)).toEqual({
        action: 'wait',
        ms: 2 * SECOND,
        reason: 'earlier_after_start',
      });
    w.clock.advance(MINUTE);
    expect(await w.engine.handle(removed!)).toMatchObject({ reason: 'earlier_after_start' });
    expect(w.sentIds).toEqual([]);
    expect(await w.engine.handle(unconfirmed!)).toEqual({ action: 'done', reason: 'delivered' });
    // The confirmed one was looked at here: removed waits for it as for any held one.
    expect(await w.engine.handle(removed!)).toMatchObject({ reason: 'earlier_delivery' });
    expect(await w.engine.handle(confirmed!)).toEqual({ action: 'done', reason: 'delivered' });
    expect(await w.engine.handle(removed!)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.sentIds).toEqual([unconfirmed!.id, confirmed!.id, removed!.id]);

    // The grace over: an earlier delivery with no attempt and not here is not waited for (the
    // webhook does not subscribe to it, it was dropped), as before.
    w.clock.advance(grace);
    const alone = w.phaseJob('wh_a', 'ev_y', 'confirmed');
    expect(await w.engine.handle(alone, true)).toEqual({ action: 'done', reason: 'delivered' });
  });

  it('just after a start, a later delivery waits only for the earlier phases its job names as published (QA: a removed whose confirmation was cancelled waited out the 90 s grace)', async () => {
    const w = world({ startGraceMs: MINUTE + HELD_RETURN_MS });
    w.webhook('wh_a', 'acc_a', DOWN);
    w.down.on = false;
    const unconfirmed = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    expect(await w.engine.handle(unconfirmed, true)).toEqual({
      action: 'done',
      reason: 'delivered',
    });
    // The reorg came before the confirmation: the matcher published no confirmed job.
    const removed = {
      ...w.phaseJob('wh_a', 'ev_x', 'removed'),
      earlierPhases: ['unconfirmed' as const],
    };
    expect(await w.engine.handle(removed, true)).toEqual({ action: 'done', reason: 'delivered' });
    // A confirmed-only webhook's confirmed job names no earlier phase.
    const alone = { ...w.phaseJob('wh_a', 'ev_y', 'confirmed'), earlierPhases: [] };
    expect(await w.engine.handle(alone, true)).toEqual({ action: 'done', reason: 'delivered' });
    // A named phase not here yet is still waited for.
    const late = {
      ...w.phaseJob('wh_a', 'ev_z', 'removed'),
      earlierPhases: ['confirmed' as const],
    };
    expect(await w.engine.handle(late, true)).toMatchObject({ reason: 'earlier_after_start' });
    expect(w.sentIds).toEqual([unconfirmed.id, removed.id, alone.id]);
  });

  it('a delivery without an attempt of its own is put back at most HELD_RETURN_MS while it waits for an earlier one (a restarted worker meets it within its grace)', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const first = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const second = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    let step = await w.engine.handle(first, true);
    for (let slot = 2; slot <= 5; slot += 1) {
      w.clock.advance((step as { ms: number }).ms);
      step = await w.engine.handle(first);
    }
    // Slot 5 failed: the next is due in 5 min; the confirmed one, with no row, looks at 30 s.
    expect(step).toEqual({ action: 'wait', ms: 5 * MINUTE, reason: 'not_due' });
    expect(await w.engine.handle(second, true)).toEqual({
      action: 'wait',
      ms: HELD_RETURN_MS,
      reason: 'earlier_delivery',
    });
  });

  it('an earlier delivery silent long past its due time (its job gone) no longer holds the later one', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', DOWN);
    const first = w.phaseJob('wh_a', 'ev_x', 'unconfirmed');
    const second = w.phaseJob('wh_a', 'ev_x', 'confirmed');
    await w.engine.handle(first, true);
    w.clock.advance(5 * SECOND + 2 * DELIVERY_WAIT_LIMIT_MS);
    expect(await w.engine.handle(second, true)).toMatchObject({ reason: 'earlier_delivery' });
    w.clock.advance(MINUTE);
    w.down.on = false;
    expect(await w.engine.handle(second)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(second.id).map((r) => r.slot)).toEqual([2]);
  });
});

describe('hostOf (the 200 req/s bucket key)', () => {
  it.each([
    ['https://a.example.com/x', 'a.example.com'],
    ['https://a.example.com:8443/x', 'a.example.com'],
    ['http://a.example.com:8080/y?z=1', 'a.example.com'],
    ['https://[2606:4700::1111]:8443/x', '[2606:4700::1111]'],
    ['https://93.184.216.34:9000/', '93.184.216.34'],
  ])('%s → %s (the port is not part of the host)', (url, host) => {
    expect(hostOf(url)).toBe(host);
  });
});

/** The message the consumer runner hands the handler (payload already validated). */
function delivered(job: DeliveryJob, deliveryCount: number): ConsumedMessage {
  return {
    event: Events.deliveryJob,
    payload: job,
    subject: `webhook.delivery.requested.v1.${job.webhookId}`,
    deliveryCount,
    streamSequence: 1,
    msgId: job.id,
    data: new TextEncoder().encode(JSON.stringify(job)),
    working: () => undefined,
  };
}

describe('delivery jobs consumer: a job is acked only once its outcome is on the stream', () => {
  it('a failed health publish puts the job back (retryable, not acked); the next look publishes the outcome without a second request or bill', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const job = w.job('wh_a');
    const handler = deliveryJobsHandler(w.engine);

    w.healthFailure.error = new DomainError('messaging_unavailable', 'unavailable', 'no PubAck');
    const failed = await handler(delivered(job, 1)).catch((error: unknown) => error);
    // The runner naks a retryable DomainError (outcomeOfError): the job is not acked.
    expect(failed).toBeInstanceOf(DomainError);
    expect(failed).toMatchObject({ retryable: true });
    expect(w.sent).toEqual([FAST]);
    expect(w.health).toEqual([]);

    w.healthFailure.error = undefined;
    await expect(handler(delivered(job, 2))).resolves.toBeUndefined();
    expect(w.sent).toEqual([FAST]);
    expect(w.attempts.of(job.id).map((r) => [r.attempt, r.outcome, r.billed])).toEqual([
      [1, 'success', true],
    ]);
    expect(w.health.map((h) => [h.id, h.outcome])).toEqual([[`${job.id}:1`, 'success']]);
  });
});

describe('DeliveryEngine: a job brought again while this process looks at it', () => {
  it('is put back (job_in_hand) without touching the log; the look in hand records its success (CI: kill-9 spec left a delivered job "interrupted")', async () => {
    const w = world();
    w.webhook('wh_slow', 'acc_slow', SLOW);
    const job = w.job('wh_slow');
    const first = w.engine.handle(job, true);
    await settle();
    expect(w.held.count).toBe(1);

    // The message's ack wait ran out while the request hangs: JetStream brings it again.
    const again = await w.engine.handle(job, false);
    expect(again).toEqual({ action: 'wait', ms: 1_000, reason: 'job_in_hand' });
    expect(w.waits).toContain('job_in_hand');
    expect(w.attempts.of(job.id)).toHaveLength(1);
    expect(w.attempts.of(job.id)[0]!.outcome).toBeNull();

    w.held.answerAll();
    expect(await first).toEqual({ action: 'done', reason: 'delivered' });
    const rows = w.attempts.of(job.id);
    expect(rows.map((r) => [r.attempt, r.outcome])).toEqual([[1, 'success']]);
    expect(w.sent.filter((url) => url === SLOW)).toHaveLength(1);
    // Once the first look is over, the job is looked at as usual again: it is done.
    expect(await w.engine.handle(job, false)).toEqual({ action: 'done', reason: 'delivered' });
  });
});

describe('DeliveryEngine: the first delivery of a job skips the attempt read', () => {
  it('a job brought for the first time although it was attempted (published again) is not attempted or billed twice', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const job = w.job('wh_a');
    expect(await w.engine.handle(job, true)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.sent).toHaveLength(1);

    // The same job again as a new stream message (deliveryCount 1): the claim of attempt 1
    // finds the row, nothing is sent; the next look reads the log and is done.
    const again = await w.engine.handle(job, true);
    expect(again).toMatchObject({ action: 'wait', reason: 'claimed_elsewhere' });
    expect(await w.engine.handle(job, false)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.sent).toHaveLength(1);
    expect(w.attempts.of(job.id).map((r) => [r.attempt, r.billed])).toEqual([[1, true]]);
    expect(w.health.map((h) => h.id)).toEqual([`${job.id}:1`]);
  });

  it('a first delivery of a failed job does not start attempt 1 again: the lost claim sends the job to a full look', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const job = w.job('wh_a');
    await w.attempts.claim(
      {
        id: `${job.id}:1`,
        jobId: job.id,
        attempt: 1,
        eventKey: eventAttemptsKey(job),
        accountId: 'acc_a',
        webhookId: 'wh_a',
        startedAt: w.clock.now(),
        billed: true,
      },
      { outcome: 'failure', finishedAt: w.clock.now(), errorClass: 'http_status' },
    );
    expect(await w.engine.handle(job, true)).toMatchObject({
      action: 'wait',
      reason: 'claimed_elsewhere',
    });
    expect(w.sent).toEqual([]);
    // The full look sees attempt 1 failed: attempt 2 is due 5 s after it.
    expect(await w.engine.handle(job, false)).toEqual({
      action: 'wait',
      ms: 5 * SECOND,
      reason: 'not_due',
    });
    w.clock.advance(5 * SECOND);
    expect(await w.engine.handle(job, false)).toEqual({ action: 'done', reason: 'delivered' });
    expect(w.attempts.of(job.id).map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'failure'],
      [2, 'success'],
    ]);
  });
});

describe('DeliveryEngine: a secret the key ring cannot open (ADR 0424)', () => {
  it('a secret sealed under a key the ring does not hold: reported, no attempt, no request, the job comes back', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const other = new SecretKeyRing(randomBytes(32));
    w.setSealed('wh_a', other.seal('whsec_elsewhere'));
    const job = w.job('wh_a');
    const handler = deliveryJobsHandler(w.engine);

    const failed = await handler(delivered(job, 1)).catch((error: unknown) => error);
    // As any failure to open: a retryable DomainError the runner naks after 5 s.
    expect(failed).toBeInstanceOf(DomainError);
    expect(failed).toMatchObject({ retryable: true, details: { retryAfterMs: 5_000 } });
    expect(w.refused).toEqual([['unknown_key', other.currentKeyId, job.id]]);
    expect(w.sent).toEqual([]);
    expect(w.attempts.of(job.id)).toEqual([]);
    expect(w.health).toEqual([]);

    // The ring's own key again (the entry resealed): the same job is delivered.
    w.setSealed('wh_a', secrets.seal('whsec_here'));
    await expect(handler(delivered(job, 2))).resolves.toBeUndefined();
    expect(w.sent).toEqual([FAST]);
    expect(w.refused).toHaveLength(1);
  });

  it('a tampered secret is refused as not_opened', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const parts = secrets.seal('whsec_x').split('.');
    parts[4] = Buffer.from('whsec_evil').toString('base64url');
    w.setSealed('wh_a', parts.join('.'));
    await expect(w.engine.handle(w.job('wh_a'))).rejects.toThrow('integrity');
    expect(w.refused.map(([reason]) => reason)).toEqual(['not_opened']);
    expect(w.sent).toEqual([]);
  });
});

describe('DeliveryEngine: every previous secret signs until its own expiry (ADR 0423 amendment)', () => {
  it('signs with the current, the latest previous and the earlier ones, each until its expiry', async () => {
    const w = world();
    w.webhook('wh_a', 'acc_a', FAST);
    const at = (ms: number) => new Date(w.clock.now().getTime() + ms).toISOString();
    const [current, second, first] = ['whsec_c', 'whsec_p2', 'whsec_p1'];
    w.entries.set('wh_a', {
      ...w.entries.get('wh_a')!,
      secrets: [
        { sealed: secrets.seal(current), expiresAt: null },
        { sealed: secrets.seal(second), expiresAt: at(24 * 60 * MINUTE) },
      ],
      earlierSecrets: [{ sealed: secrets.seal(first), expiresAt: at(10 * MINUTE) }],
    });
    /** The secrets whose X-Signature entry verifies the request sent for a new job. */
    const signedWith = async () => {
      const job = w.job('wh_a');
      await w.engine.handle(job);
      const headers = w.sentHeaders.at(-1)!;
      const header = headers['x-signature']!;
      const entries = header.match(/v1=/g)!.length;
      expect(headers['webhook-signature']!.split(' ')).toHaveLength(entries);
      const nowS = Math.floor(w.clock.now().getTime() / 1000);
      const body = JSON.stringify(job.payload);
      const verified = [current, second, first].filter((secret) =>
        verifyXSignature(header, body, secret, nowS),
      );
      expect(verified).toHaveLength(entries);
      return verified;
    };
    expect(await signedWith()).toEqual([current, second, first]);
    w.clock.advance(10 * MINUTE);
    expect(await signedWith()).toEqual([current, second]);
  });
});

/**
 * A pulled JetStream message carrying `job` (its body made valid for the event schema, which
 * the runner checks), recording how the runner settled it.
 */
function pulled(job: DeliveryJob, deliveryCount: number) {
  const settled: string[] = [];
  const body = {
    ...job,
    payload: {
      webhookId: job.webhookId,
      eventId: job.eventId,
      type: 'address_activity',
      network: 'eth-mainnet',
      confirmed: false,
      removed: false,
      block: { number: '0x10', hash: `0x${'a'.repeat(64)}`, timestamp: '0x5' },
      raw: { hash: `0x${'b'.repeat(64)}` },
    },
  };
  const msg = {
    subject: `webhook.delivery.requested.v1.${job.webhookId}`,
    data: new TextEncoder().encode(JSON.stringify(body)),
    headers: undefined,
    info: { deliveryCount, streamSequence: 1 },
    ack: () => settled.push('ack'),
    ackAck: async () => settled.push('ack') > 0,
    nak: (delayMs?: number) => settled.push(`nak ${delayMs}`),
    term: () => settled.push('term'),
    working: () => undefined,
  };
  return { msg: msg as unknown as JsMsg, settled };
}

describe('delivery jobs consumer: a scheduled wait is a redelivery, not a failure (soak: 26,514 warnings)', () => {
  function runner(w: ReturnType<typeof world>) {
    const lines: Array<[string, string | undefined, object]> = [];
    const line = (level: string) => (obj: object, msg?: string) => lines.push([level, msg, obj]);
    const redelivered: Array<{ consumer: string; reason: string }> = [];
    const consumerRunner = new ConsumerRunner(
      Consumers.workerDeliveryJobs,
      deliveryJobsHandler(w.engine),
      {
        client: undefined as never,
        publisher: {
          publishJson: async (_subject: string, letter: unknown) => {
            throw new Error(`dead-lettered: ${JSON.stringify(letter)}`);
          },
        } as never,
        namespace: new NatsNamespace(''),
        logger: {
          info: line('info'),
          warn: line('warn'),
          error: line('error'),
          debug: line('debug'),
        },
        redelivered: { inc: (labels) => redelivered.push(labels) },
      },
    );
    return { consumerRunner, lines, redelivered };
  }

  it('not_due after a failed attempt: nak with the schedule’s wait, a debug line, counted by reason; no warning', async () => {
    const w = world();
    w.webhook('wh_d', 'acc_d', DOWN);
    const job = w.job('wh_d');
    const { consumerRunner, lines, redelivered } = runner(w);

    const first = pulled(job, 1);
    await consumerRunner.handle(first.msg);
    expect(w.attempts.of(job.id).map((r) => [r.attempt, r.outcome])).toEqual([[1, 'failure']]);
    expect(first.settled).toEqual([`nak ${DELIVERY_RETRY_WAITS_MS[0]}`]);

    const early = pulled(job, 2);
    await consumerRunner.handle(early.msg);
    expect(early.settled).toHaveLength(1);
    expect(early.settled[0]).toMatch(/^nak \d+$/);
    expect(w.attempts.of(job.id)).toHaveLength(1);

    expect(lines.filter(([level]) => level === 'warn' || level === 'error')).toEqual([]);
    expect(lines.filter(([level]) => level === 'debug').map(([, msg]) => msg)).toEqual([
      'redelivery asked',
      'redelivery asked',
    ]);
    expect(redelivered.map((r) => r.reason)).toEqual(['not_due', 'not_due']);
    expect(w.waits).toEqual(['not_due', 'not_due']);
  });

  it('endpoint_busy waits quietly too; a real failure (health not published) is still a warning', async () => {
    const w = world();
    w.webhook('wh_s', 'acc_s', SLOW);
    const inFlight = Array.from({ length: 10 }, () => w.engine.handle(w.job('wh_s')));
    await settle();
    const { consumerRunner, lines, redelivered } = runner(w);

    const busy = pulled(w.job('wh_s'), 1);
    await consumerRunner.handle(busy.msg);
    expect(busy.settled).toHaveLength(1);
    expect(busy.settled[0]).toMatch(/^nak \d+$/);
    expect(redelivered.map((r) => r.reason)).toEqual(['endpoint_busy']);
    expect(lines.filter(([level]) => level === 'warn')).toEqual([]);
    w.held.answerAll();
    await Promise.all(inFlight);

    w.webhook('wh_f', 'acc_f', FAST);
    w.healthFailure.error = new DomainError('messaging_unavailable', 'unavailable', 'no PubAck');
    const failing = pulled(w.job('wh_f'), 1);
    await consumerRunner.handle(failing.msg);
    expect(failing.settled).toEqual(['nak 5000']);
    expect(lines.filter(([level]) => level === 'warn').map(([, msg]) => msg)).toEqual([
      'handler failed',
    ]);
  });
});
