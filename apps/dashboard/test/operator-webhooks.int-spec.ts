import { randomBytes } from 'node:crypto';
import { deliveryJobId, Events, type DeliveryHealth } from '@meridian/contracts';
import { createAppDataSource, initializeDataSource, runMigrations } from '@meridian/platform-db';
import {
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  runAppScript,
  startAppProcess,
  startBillingLedgerProcess,
  testNatsUrl,
  type AppProcess,
  type BillingLedgerProcess,
  type TestDatabase,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { OPERATOR_TOKEN } from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient, type BffAnswer } from './support/bff-client';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery staple';
const MIN = 60_000;
const eventId = (n: number) => `ev_${n.toString(16).padStart(32, '0')}`;

/**
 * The operator reads a customer's webhooks and their delivery logs (support's "my webhook didn't
 * fire"), read-only, through the real BFF and the real webhook-matcher's operator routes (a child
 * process with the dashboard's operator token) and billing-ledger: the list's fields, the log
 * with the customer's own filters and cursor, the same answers the customer's page gets, and the
 * refusals (unknown account, unknown or another account's webhook, bad filters, a customer).
 */
describe("the operator's read of an account's webhooks and delivery logs (real BFF, webhook-matcher, billing-ledger)", () => {
  const natsPrefix = `dash_opwh_${process.pid}_${Date.now().toString(36)}`;
  let billingDb: TestDatabase;
  let matcherDb: TestDatabase;
  let db: TestDatabase;
  let billing: BillingLedgerProcess;
  let matcher: AppProcess;
  let app: NestFastifyApplication;
  let nats: NatsClient;
  let publisher: JetStreamPublisher;

  beforeAll(async () => {
    [billingDb, matcherDb, db] = await Promise.all([
      createTestDatabase({ prefix: 'dashboard_opwh_billing' }),
      createTestDatabase({ prefix: 'dashboard_opwh_matcher' }),
      createTestDatabase({ prefix: 'dashboard_opwh' }),
    ]);
    const rows = createAppDataSource(dataSourceOptions(db.url));
    await initializeDataSource(rows);
    try {
      await runMigrations(rows, SCHEMA);
    } finally {
      await rows.destroy();
    }
    const nc = await connect({ servers: testNatsUrl() });
    try {
      await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    } finally {
      await nc.close();
    }
    billing = await startBillingLedgerProcess({
      operatorToken: OPERATOR_TOKEN,
      databaseUrl: billingDb.url,
      natsPrefix,
      env: { LEDGER_TICK_MS: '0', LOG_LEVEL: 'error' },
      startTimeoutMs: 45_000,
    });
    await runAppScript('apps/webhook-matcher/src/migrate.ts', { DATABASE_URL: matcherDb.url });
    matcher = await startAppProcess(async () => {
      const port = await freePort();
      return {
        main: 'apps/webhook-matcher/src/main.ts',
        env: {
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(port),
          DATABASE_URL: matcherDb.url,
          NATS_URL: testNatsUrl(),
          NATS_PREFIX: natsPrefix,
          BILLING_GRPC_URL: billing.grpcTarget,
          WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
          OPERATOR_TOKEN,
          LOG_LEVEL: 'error',
        },
        healthUrl: `http://127.0.0.1:${port}/healthz`,
        startTimeoutMs: 60_000,
      };
    });
    app = await startBff(
      bffEnv({
        databaseUrl: db.url,
        billingApiUrl: `${billing.url}/api/v1`,
        webhooksApiUrl: `http://127.0.0.1:${matcher.options.env!['HTTP_PORT']}/api/v1`,
      }),
    );
    nats = new NatsClient({ url: testNatsUrl(), name: 'dashboard-operator-webhooks-test' });
    await nats.connection();
    publisher = new JetStreamPublisher(nats, new NatsNamespace(natsPrefix));
  }, 150_000);

  afterAll(async () => {
    await nats?.close();
    await app?.close();
    await matcher?.stop();
    await billing?.stop();
    await deleteNatsNamespace(testNatsUrl(), natsPrefix);
    await Promise.all([billingDb?.drop(), matcherDb?.drop(), db?.drop()]);
  });

  const customer = async (email: string, address: string) => {
    const browser = new BffClient(app, address);
    expect(
      (await browser.call('POST', '/api/auth/sign-up', { email, password: PASSWORD })).status,
    ).toBe(201);
    await browser.call('GET', '/api/auth/session');
    const account = await browser.call('GET', '/api/relay/billing/account');
    return { browser, accountId: String(account.body['id']) };
  };

  const webhook = async (browser: BffClient, name: string, target: string) => {
    const made = await browser.call('POST', '/api/relay/webhooks/webhooks', {
      name,
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: target,
      addresses: ['0x6666666666666666666666666666666666666666'],
    });
    expect(made.status).toBe(201);
    return String(made.body['id']);
  };

  /** What delivery-worker publishes after an attempt: the matcher writes its log from it. */
  const attempted = (
    accountId: string,
    webhookId: string,
    n: number,
    outcome: DeliveryHealth['outcome'],
    at: Date,
  ) =>
    publisher.publish(Events.deliveryHealth, {
      id: `${deliveryJobId(webhookId, eventId(n), 'unconfirmed')}:1`,
      webhookId,
      accountId,
      eventId: eventId(n),
      phase: 'unconfirmed',
      attempt: 1,
      eventAttempt: 1,
      outcome,
      billed: true,
      final: outcome === 'success',
      at: at.toISOString(),
      ...(outcome === 'failure'
        ? { statusCode: 500, errorClass: 'http_status' as const, responseBody: 'down' }
        : { statusCode: 200 }),
      durationMs: 12,
    } satisfies DeliveryHealth);

  const eventually = async (check: () => Promise<boolean>) => {
    const until = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('not reached within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  const events = (answer: BffAnswer) =>
    (answer.body['items'] as { event_id: string; outcome: string }[]).map(
      (row) => `${row.event_id.slice(-2)} ${row.outcome}`,
    );

  it("lists an account's webhooks and reads a webhook's log with the customer's filters and cursor, as the customer reads it", async () => {
    const alice = await customer('alice-ops@example.com', '10.8.0.1');
    const bob = await customer('bob-ops@example.com', '10.8.0.2');
    const operator = new BffClient(app, '10.8.0.9');
    expect(
      (
        await operator.call('POST', '/api/auth/sign-in', {
          email: 'ops@example.com',
          password: 'operator password 1',
        })
      ).status,
    ).toBe(200);
    // Starter: Free allows one webhook.
    const plan = `/api/operator/accounts/${alice.accountId}/plan`;
    expect((await operator.call('PUT', plan, { plan: 'starter' })).status).toBe(200);
    const treasury = await webhook(
      alice.browser,
      'Treasury',
      'https://hooks.example.com/in/s3cret-path?token=t',
    );
    const payroll = await webhook(alice.browser, 'Payroll', 'https://pay.example.org/hook');
    const paused = await alice.browser.call(
      'POST',
      `/api/relay/webhooks/webhooks/${payroll}/pause`,
      {},
    );
    expect(paused.status).toBe(200);
    const bobs = await webhook(bob.browser, 'Not yours', 'https://bob.example.net/hook');

    const list = await operator.call('GET', `/api/operator/accounts/${alice.accountId}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      items: [
        {
          id: payroll,
          name: 'Payroll',
          status: 'paused',
          status_label: 'Paused',
          paused_reason: 'owner_paused',
          network: 'eth-mainnet',
          trigger_type: 'address_activity',
          target_host: 'pay.example.org',
          version: paused.body['version'],
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        expect.objectContaining({
          id: treasury,
          status: 'active',
          paused_reason: null,
          target_host: 'hooks.example.com',
          version: 1,
        }),
      ],
      next_cursor: null,
    });
    // The host only: a target's path and query may carry the customer's own secret.
    expect(JSON.stringify(list.body)).not.toContain('s3cret');

    // Three attempts of Treasury's events: 1 failed 20 min ago, 2 delivered 10 min ago, 3 failed now.
    const now = Date.now();
    const log = `/api/operator/accounts/${alice.accountId}/webhooks/${treasury}/deliveries`;
    const own = `/api/relay/webhooks/webhooks/${treasury}/deliveries`;
    // One at a time: outcomes are consumed in parallel, and the log lists them as recorded.
    for (const [n, outcome, ago] of [
      [1, 'failure', 20 * MIN],
      [2, 'success', 10 * MIN],
      [3, 'failure', 1_000],
    ] as const) {
      await attempted(alice.accountId, treasury, n, outcome, new Date(now - ago));
      await eventually(async () => {
        const all = await operator.call('GET', `${log}?outcome=success,failure`);
        return (all.body['items'] as unknown[] | undefined)?.length === n;
      });
    }

    // The API's default, failures only, newest first.
    const failed = await operator.call('GET', log);
    expect([failed.status, events(failed)]).toEqual([200, ['03 failure', '01 failure']]);
    expect((failed.body['items'] as Record<string, unknown>[])[0]).toMatchObject({
      status_code: 500,
      phase: 'unconfirmed',
      attempt: 1,
    });
    // Each filter the customer's page sends, and what the customer's own page gets for it.
    const since = new Date(now - 15 * MIN).toISOString();
    const until = new Date(now - 5 * MIN).toISOString();
    for (const [query, expected] of [
      ['outcome=success', ['02 success']],
      ['outcome=success,failure', ['03 failure', '02 success', '01 failure']],
      [`outcome=success,failure&since=${since}&until=${until}`, ['02 success']],
      [`since=${since}`, ['03 failure']],
      [`tx_hash=0x${'ab'.repeat(32)}`, []],
      ['block_number=0x10', []],
      [`event_id=${eventId(2)}`, ['02 success']],
    ] as const) {
      const read = await operator.call('GET', `${log}?${query}`);
      expect([query, read.status, events(read)]).toEqual([query, 200, expected]);
      expect(read.body).toEqual((await alice.browser.call('GET', `${own}?${query}`)).body);
    }
    // The customer's cursor, a page at a time.
    const first = await operator.call('GET', `${log}?outcome=success,failure&limit=2`);
    expect(events(first)).toEqual(['03 failure', '02 success']);
    const cursor = String(first.body['next_cursor']);
    const second = await operator.call(
      'GET',
      `${log}?outcome=success,failure&limit=2&cursor=${cursor}`,
    );
    expect([events(second), second.body['next_cursor']]).toEqual([['01 failure'], null]);

    // Bad filters: 400 with the customer page's codes, the same as its relay answers.
    for (const query of [
      'outcome=nope',
      `since=${until}&until=${since}`,
      'tx_hash=0x12',
      'cursor=x',
      'sort=newest',
    ]) {
      const refused = await operator.call('GET', `${log}?${query}`);
      const customers = await alice.browser.call('GET', `${own}?${query}`);
      expect([query, refused.status, refused.body['error']]).toEqual([
        query,
        400,
        customers.body['error'],
      ]);
      expect(customers.status).toBe(400);
      expect(refused.body['message']).toBe(customers.body['message']);
    }

    // Unknown account 404 (billing's), unknown webhook and another account's webhook 404.
    for (const path of [
      '/api/operator/accounts/acc_000000000000000000000000/webhooks',
      `/api/operator/accounts/acc_000000000000000000000000/webhooks/${treasury}/deliveries`,
      `/api/operator/accounts/${alice.accountId}/webhooks/wh_${'a'.repeat(24)}/deliveries`,
      `/api/operator/accounts/${alice.accountId}/webhooks/${bobs}/deliveries`,
      `/api/operator/accounts/${alice.accountId}/webhooks/..%2F..%2Fx/deliveries`,
    ]) {
      const missing = await operator.call('GET', path);
      expect([path, missing.status, missing.body['error']]).toEqual([path, 404, 'not_found']);
    }
    // A customer's session: 403 on both, their own account included.
    for (const path of [
      `/api/operator/accounts/${alice.accountId}/webhooks`,
      `${log}?outcome=success`,
    ])
      expect((await alice.browser.call('GET', path)).status).toBe(403);
    // Read-only: no route changes a webhook from the operator's side.
    for (const [method, path] of [
      ['POST', `${log}/${eventId(1)}/replay`],
      ['POST', `/api/operator/accounts/${alice.accountId}/webhooks/${treasury}/pause`],
      ['DELETE', `/api/operator/accounts/${alice.accountId}/webhooks/${treasury}`],
    ] as const)
      expect((await operator.call(method, path, {})).status).toBe(404);
  });

  it('pages the list with the matcher cursor and refuses a malformed one', async () => {
    const carol = await customer('carol-ops@example.com', '10.8.0.3');
    const operator = new BffClient(app, '10.8.0.10');
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    const empty = await operator.call('GET', `/api/operator/accounts/${carol.accountId}/webhooks`);
    expect([empty.status, empty.body]).toEqual([200, { items: [], next_cursor: null }]);
    const bad = await operator.call(
      'GET',
      `/api/operator/accounts/${carol.accountId}/webhooks?cursor=not-a-cursor`,
    );
    expect([bad.status, bad.body['error']]).toEqual([400, 'invalid_cursor']);
    const unknownQuery = await operator.call(
      'GET',
      `/api/operator/accounts/${carol.accountId}/webhooks?limit=5`,
    );
    expect([unknownQuery.status, unknownQuery.body['error']]).toEqual([400, 'invalid_query']);
  });
});
