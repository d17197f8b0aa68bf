import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, runAppScript, type TestDatabase } from '@meridian/testing';
import { deliveriesPage, type DeliveryAttempt } from '../src/deliveries/deliveries.schemas';
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

/** A loopback receiver: `/ok` answers 200, `/down` 500; counts the requests of each path. */
class Receiver {
  readonly got = new Map<string, number>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '/';
        this.got.set(path, (this.got.get(path) ?? 0) + 1);
        if (path === '/ok') res.writeHead(200).end('ok');
        else res.writeHead(500).end('receiver is down');
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
 * The outcome of a test delivery can be read (README "Delivery log"): webhook-matcher (in
 * process) publishes the test job, the real delivery-worker (a child process) sends it to a
 * loopback receiver and publishes the outcome, the matcher records it, and
 * `GET /webhooks/{id}/deliveries?event_id=test_…` answers that event's attempts, a success
 * included, while the plain log still lists failures only. Real Postgres, NATS, billing-ledger.
 */
describe('test deliveries: their outcome through the real delivery-worker', () => {
  let s: MatcherTestStack;
  let workerDb: TestDatabase;
  let worker: RunningDeliveryWorker | undefined;
  const receiver = new Receiver();
  let key: string;
  let other: string;

  beforeAll(async () => {
    s = await startMatcherStack();
    await receiver.start();
    workerDb = await createTestDatabase({ prefix: 'wh_testlog_worker' });
    await runAppScript('apps/delivery-worker/src/migrate.ts', { DATABASE_URL: workerDb.url });
    worker = await startDeliveryWorkerProcess({
      databaseUrl: workerDb.url,
      natsPrefix: s.natsPrefix,
      env: { WEBHOOK_SECRETS_KEY: s.config.WEBHOOK_SECRETS_KEY },
    });
    ({ key } = await s.billing.createAccount({ plan: 'starter' }));
    other = (await s.billing.createAccount({ plan: 'starter' })).key;
  });

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
    await workerDb?.drop();
    await s?.close();
  });

  async function create(target: string): Promise<string> {
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: target,
      addresses: [address(7)],
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  /** Sends a test delivery; answers its event id once the outcome of its attempt is logged. */
  async function testOutcome(id: string): Promise<{ eventId: string; items: DeliveryAttempt[] }> {
    const queued = await s.call('POST', `/webhooks/${id}/test`, key);
    expect(queued.status).toBe(202);
    const eventId = queued.body.event_id as string;
    expect(eventId).toMatch(/^test_[0-9a-f]{24}$/);
    let items: DeliveryAttempt[] = [];
    await eventually(async () => {
      const page = await s.call('GET', `/webhooks/${id}/deliveries?event_id=${eventId}`, key);
      expect(page.status).toBe(200);
      expect(deliveriesPage.safeParse(page.body).error).toBeUndefined();
      items = page.body.items as DeliveryAttempt[];
      return items.length > 0;
    }, 30_000);
    return { eventId, items };
  }

  it('a test delivery the endpoint accepts is listed under its event id as a success, and only there', async () => {
    const id = await create(`${receiver.url}/ok`);
    // Queued and not yet sent: the event has no attempt yet, an empty page (not a 404).
    const pending = await s.call(
      'GET',
      `/webhooks/${id}/deliveries?event_id=test_${'0'.repeat(24)}`,
      key,
    );
    expect(pending).toEqual({ status: 200, body: { items: [], next_cursor: null } });

    const { eventId, items } = await testOutcome(id);
    expect(receiver.got.get('/ok')).toBe(1);
    expect(items).toEqual([
      {
        event_id: eventId,
        phase: 'unconfirmed',
        attempt: 1,
        // The worker's slot of the event, through its health event; a test has one attempt.
        event_attempt: 1,
        event_attempts_left: 0,
        at: expect.any(String),
        outcome: 'success',
        final: true,
        test: true,
        billed: false,
        status_code: 200,
        duration_ms: expect.any(Number),
        error_class: null,
        error: null,
        response_body: null,
        // A test delivery is no chain event: no summary (ADR 0433).
        network: null,
        block_number: null,
        tx_hash: null,
        addresses: [],
      },
    ]);
    // The failed log (no event_id) stays what COMPAT names: failed attempts only.
    const failed = await s.call('GET', `/webhooks/${id}/deliveries`, key);
    expect(failed.body).toEqual({ items: [], next_cursor: null });
    // A test is free and out of the counters.
    const stats = await s.call('GET', `/webhooks/${id}/stats`, key);
    expect(stats.body).toMatchObject({ delivered_total: 0, failed_total: 0 });
  });

  it('a refused test delivery is listed under its event id with the status and the error, and in the failed log', async () => {
    const id = await create(`${receiver.url}/down`);
    const { eventId, items } = await testOutcome(id);
    expect(items).toEqual([
      expect.objectContaining({
        event_id: eventId,
        attempt: 1,
        outcome: 'failure',
        final: true,
        test: true,
        status_code: 500,
        error_class: 'http_status',
        response_body: 'receiver is down',
      }),
    ]);
    const failed = await s.call('GET', `/webhooks/${id}/deliveries`, key);
    expect((failed.body.items as DeliveryAttempt[]).map((a) => a.event_id)).toEqual([eventId]);
  });

  it('a malformed event id is 400 invalid_query naming it; another account sees 404', async () => {
    const id = await create(`${receiver.url}/ok`);
    for (const bad of ['test_123', 'ev_XYZ', 'wh_abc', ''] as const) {
      const answer = await s.call('GET', `/webhooks/${id}/deliveries?event_id=${bad}`, key);
      expect([answer.status, answer.body.error, answer.body.path]).toEqual([
        400,
        'invalid_query',
        'query.event_id',
      ]);
    }
    const eventId = `test_${'a'.repeat(24)}`;
    const foreign = await s.call('GET', `/webhooks/${id}/deliveries?event_id=${eventId}`, other);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'not_found']);
  });
});
