import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Events, deliveryJobId, type DeliveryJob } from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  movedClock,
  runAppScript,
  testNatsUrl,
  type TestDatabase,
} from '@meridian/testing';
import {
  address,
  eventually,
  startMatcherStack,
  type MatcherTestStack,
} from './support/matcher-app';
import {
  startDeliveryWorkerProcess,
  type RunningDeliveryWorker,
} from './support/delivery-worker.process';

jest.setTimeout(240_000);

const MINUTE = 60_000;

/** A loopback receiver answering every request with `status` (500 until the owner fixes it). */
class Receiver {
  status = 500;
  /** The eventId of every request, in arrival order. */
  readonly got: string[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.got.push(
          (JSON.parse(Buffer.concat(chunks).toString()) as { eventId: string }).eventId,
        );
        res.writeHead(this.status).end(`answer ${this.status}`);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * The QA report "resume after fixing the endpoint re-pauses at once and drops the event":
 * webhook-matcher (in process) and the real delivery-worker (a child process) on one moved
 * clock (ADR 0505: the worker reads CLOCK_OFFSET_FILE, the matcher's FakeClock is set to the
 * same time). The endpoint fails, the worker's breaker opens, 30 minutes later the matcher
 * pauses the webhook (paused_auto); the owner fixes the endpoint and resumes while the breaker
 * is still open: the next event is delivered (the breaker's probe) and the webhook stays active.
 */
describe('pause and resume: webhook-matcher + delivery-worker, real Postgres and NATS', () => {
  let s: MatcherTestStack;
  let workerDb: TestDatabase;
  let worker: RunningDeliveryWorker | undefined;
  let client: NatsClient;
  let publisher: JetStreamPublisher;
  const receiver = new Receiver();
  const deliveryClock = movedClock('resume-clock');
  let key: string;
  let accountId: string;
  let seq = 0;

  /** Moves the delivery side's clock (worker file, matcher FakeClock) forward by `ms`. */
  function advance(ms: number): void {
    deliveryClock.advance(ms);
    syncMatcher();
  }

  function syncMatcher(): void {
    s.clock.set(deliveryClock.now());
  }

  beforeAll(async () => {
    s = await startMatcherStack();
    syncMatcher();
    await receiver.start();
    client = new NatsClient({ url: testNatsUrl(), name: 'resume-test' });
    await client.connection();
    publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
    workerDb = await createTestDatabase({ prefix: 'wh_resume_worker' });
    await runAppScript('apps/delivery-worker/src/migrate.ts', { DATABASE_URL: workerDb.url });
    worker = await startDeliveryWorkerProcess({
      databaseUrl: workerDb.url,
      natsPrefix: s.natsPrefix,
      env: {
        WEBHOOK_SECRETS_KEY: s.config.WEBHOOK_SECRETS_KEY,
        ...deliveryClock.env,
        // A held job looks again within half a second of real time and sees the moved clock.
        DELIVERY_RECHECK_MAX_MS: '500',
        USAGE_FLUSH_MS: '200',
      },
    });
    ({ key, accountId } = await s.billing.createAccount({ plan: 'starter' }));
  });

  afterAll(async () => {
    await worker?.stop();
    await client?.close();
    await receiver.stop();
    await workerDb?.drop();
    await s?.close();
    deliveryClock.dispose();
  });

  /** One matched event of `webhookId`, as the matcher publishes its delivery job. */
  async function event(webhookId: string): Promise<DeliveryJob> {
    seq += 1;
    const eventId = `ev_${randomBytes(16).toString('hex')}`;
    const job: DeliveryJob = {
      id: deliveryJobId(webhookId, eventId, 'unconfirmed'),
      webhookId,
      accountId,
      eventId,
      phase: 'unconfirmed',
      test: false,
      attempt: 1,
      payload: {
        webhookId,
        eventId,
        type: 'address_activity',
        network: 'eth-mainnet',
        confirmed: false,
        removed: false,
        block: { number: `0x${seq.toString(16)}`, hash: `0x${'ab'.repeat(32)}`, timestamp: '0x1' },
        raw: { transactionHash: `0x${'cd'.repeat(32)}` },
      },
      createdAt: s.clock.now().toISOString(),
      route: 0,
    };
    await publisher.publish(Events.deliveryJob, job);
    return job;
  }

  const status = async (id: string) =>
    (await s.call('GET', `/webhooks/${id}`, key)).body.status as string;
  const log = async (id: string) =>
    (await s.call('GET', `/webhooks/${id}/deliveries?limit=200`, key)).body.items as Array<{
      event_id: string;
      outcome: string;
      error_class: string | null;
    }>;

  it('the next event after the resume is delivered as the breaker probe; the webhook stays active', async () => {
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: `${receiver.url}/idem`,
      addresses: [address(7)],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // 20 failing events: the breaker of the endpoint opens (> 90 % of ≥ 20 failed in 2 min).
    for (let i = 0; i < 20; i += 1) await event(id);
    await eventually(
      async () => (await s.call('GET', `/webhooks/${id}/stats`, key)).body.failed_total >= 20,
      60_000,
    );

    // 30 minutes of failures later (retries due, the breaker probes and fails again): paused_auto.
    advance(30 * MINUTE);
    await eventually(async () => (await status(id)) === 'paused_auto', 60_000);
    // Every queued event is dropped as auto_paused (spec), once each.
    await eventually(
      async () => (await log(id)).filter((r) => r.error_class === 'auto_paused').length === 20,
      30_000,
    );

    // The owner fixes the endpoint and resumes, within the breaker's 5 minutes.
    receiver.status = 200;
    advance(30_000);
    const resumed = await s.call('POST', `/webhooks/${id}/resume`, key);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');
    const next = await event(id);
    await eventually(async () => receiver.got.includes(next.eventId), 30_000);
    await eventually(
      async () => (await s.call('GET', `/webhooks/${id}/stats`, key)).body.delivered_total === 1,
      30_000,
    );
    expect(receiver.got.filter((e) => e === next.eventId)).toHaveLength(1);
    const attempts = (await log(id)).filter((r) => r.event_id === next.eventId);
    // Nothing of the new event failed, was skipped or dropped.
    expect(attempts).toEqual([]);
    // A few seconds of delivery time later, still active.
    advance(10_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    syncMatcher();
    expect(await status(id)).toBe('active');
  });

  it('QA "flip": an owner pause and resume between attempts 2 and 3 drops the event (owner_paused), unsent, unbilled; an event after the resume is delivered', async () => {
    const flip = new Receiver();
    await flip.start();
    try {
      const created = await s.call('POST', '/webhooks', key, {
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        target_url: `${flip.url}/flip`,
        addresses: [address(8)],
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const queued = await event(id);
      const sent = () => flip.got.filter((e) => e === queued.eventId).length;
      await eventually(async () => sent() === 1, 30_000);
      advance(5_000);
      await eventually(async () => sent() === 2, 30_000);
      // 00:13:27 pause, 00:13:28 resume; the endpoint is fixed; attempt 3 falls due at 00:13:40.
      advance(2_000);
      expect((await s.call('POST', `/webhooks/${id}/pause`, key)).status).toBe(200);
      advance(1_000);
      expect((await s.call('POST', `/webhooks/${id}/resume`, key)).status).toBe(200);
      flip.status = 200;
      advance(15_000);
      await eventually(
        async () =>
          (await log(id)).some(
            (r) => r.event_id === queued.eventId && r.error_class === 'owner_paused',
          ),
        30_000,
      );
      const next = await event(id);
      await eventually(async () => flip.got.includes(next.eventId), 30_000);
      expect(sent()).toBe(2);
      expect(
        (await log(id))
          .filter((r) => r.event_id === queued.eventId)
          .map((r) => [r.outcome, r.error_class])
          .sort(),
      ).toEqual([
        ['dropped', 'owner_paused'],
        ['failure', 'http_status'],
        ['failure', 'http_status'],
      ]);
      const stats = (await s.call('GET', `/webhooks/${id}/stats`, key)).body;
      expect(stats).toMatchObject({ failed_total: 2, delivered_total: 1 });
    } finally {
      await flip.stop();
    }
  });
});
