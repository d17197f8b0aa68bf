import { randomBytes } from 'node:crypto';
import { createAppDataSource, initializeDataSource, runMigrations } from '@meridian/platform-db';
import { provisionMessaging } from '@meridian/platform-messaging';
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
import { BffClient } from './support/bff-client';

jest.setTimeout(180_000);

/**
 * The relay passes an upstream's Retry-After and ETag on, and the page's If-Match to it: the
 * real webhook-matcher (a child process, one test delivery a minute per webhook) refuses a
 * webhook's second test with 429 `rate_limited` and Retry-After, and the page's call through
 * the real BFF gets both, not the status alone; a change made to a version no longer current
 * is refused 412 `version_mismatch` through the relay, with the ETag of each answer passed on.
 */
describe('the relay keeps Retry-After (real BFF, real webhook-matcher and billing-ledger)', () => {
  const natsPrefix = `dash_relay_${process.pid}_${Date.now().toString(36)}`;
  let billingDb: TestDatabase;
  let matcherDb: TestDatabase;
  let db: TestDatabase;
  let billing: BillingLedgerProcess;
  let matcher: AppProcess;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    [billingDb, matcherDb, db] = await Promise.all([
      createTestDatabase({ prefix: 'dashboard_relay_billing' }),
      createTestDatabase({ prefix: 'dashboard_relay_matcher' }),
      createTestDatabase({ prefix: 'dashboard_relay' }),
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
          TEST_DELIVERY_WEBHOOK_PER_MINUTE: '1',
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
  }, 150_000);

  afterAll(async () => {
    await app?.close();
    await matcher?.stop();
    await billing?.stop();
    await deleteNatsNamespace(testNatsUrl(), natsPrefix);
    await Promise.all([billingDb?.drop(), matcherDb?.drop(), db?.drop()]);
  });

  it("answers the matcher's 429 of a second test delivery with its Retry-After", async () => {
    const browser = new BffClient(app, '10.9.0.1');
    const signedUp = await browser.call('POST', '/api/auth/sign-up', {
      email: 'relay@example.com',
      password: 'correct horse battery staple',
    });
    expect(signedUp.status).toBe(201);
    await browser.call('GET', '/api/auth/session');
    const made = await browser.call('POST', '/api/relay/webhooks/webhooks', {
      name: 'Retry-After',
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/meridian',
      addresses: ['0x6666666666666666666666666666666666666666'],
    });
    expect(made.status).toBe(201);
    const test = `/api/relay/webhooks/webhooks/${String(made.body['id'])}/test`;

    const first = await browser.call('POST', test, {});
    expect(first.status).toBe(202);
    expect(first.headers['retry-after']).toBeUndefined();

    const second = await browser.call('POST', test, {});
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ error: 'rate_limited', scope: 'webhook', limit: 1 });
    // The matcher's own: the seconds until the minute's one test leaves its window.
    expect(second.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it("passes a page's If-Match to the matcher and its ETag back: a change to a version no longer current is 412, nothing reverted (QA QQ, Medium 1)", async () => {
    // Alice edits on the page; Bob, of the same account, changes the webhook meanwhile.
    const alice = new BffClient(app, '10.9.0.2');
    expect(
      (
        await alice.call('POST', '/api/auth/sign-up', {
          email: 'etag@example.com',
          password: 'correct horse battery staple',
        })
      ).status,
    ).toBe(201);
    await alice.call('GET', '/api/auth/session');
    const made = await alice.call('POST', '/api/relay/webhooks/webhooks', {
      name: 'Versions',
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/alice',
      addresses: ['0x7777777777777777777777777777777777777777'],
    });
    expect(made.status).toBe(201);
    const path = `/api/relay/webhooks/webhooks/${String(made.body['id'])}`;
    const loaded = await alice.call('GET', path);
    const version = loaded.body['version'] as number;
    expect(loaded.headers['etag']).toBe(`"${version}"`);

    // Bob's change (the same relay, the account's key) moves the version on.
    const bob = await alice.call(
      'PATCH',
      path,
      { target_url: 'https://hooks.example.com/bob', confirm_depth: 30 },
      { headers: { 'if-match': `"${version}"` } },
    );
    expect(bob.status).toBe(200);
    expect(bob.headers['etag']).toBe(`"${version + 1}"`);

    // Alice's save against the version she loaded: refused, in the matcher's words.
    const stale = await alice.call(
      'PATCH',
      path,
      { name: 'Versions (Alice)' },
      { headers: { 'if-match': `"${version}"` } },
    );
    expect([stale.status, stale.body['error']]).toEqual([412, 'version_mismatch']);
    expect(JSON.stringify(stale.body)).toContain(`"currentVersion":${version + 1}`);
    const now = await alice.call('GET', path);
    expect(now.body).toMatchObject({
      name: 'Versions',
      target_url: 'https://hooks.example.com/bob',
      confirm_depth: 30,
      version: version + 1,
    });

    // Reapplied onto the current version: only her field, and Bob's change stays.
    const saved = await alice.call(
      'PATCH',
      path,
      { name: 'Versions (Alice)' },
      { headers: { 'if-match': `"${version + 1}"` } },
    );
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      name: 'Versions (Alice)',
      target_url: 'https://hooks.example.com/bob',
      confirm_depth: 30,
    });
    // A delete names its version too.
    const staleDelete = await alice.call('DELETE', path, undefined, {
      headers: { 'if-match': `"${version}"` },
    });
    expect(staleDelete.status).toBe(412);
    // So do a pause and a resume (ADR 0404 amendment): the page's Pause on a version a colleague
    // moved on is refused, not applied to what the user has not seen.
    const current = version + 2;
    const stalePause = await alice.call('POST', `${path}/pause`, undefined, {
      headers: { 'if-match': `"${version}"` },
    });
    expect([stalePause.status, stalePause.body['error']]).toEqual([412, 'version_mismatch']);
    expect((await alice.call('GET', path)).body['status']).toBe('active');
    const paused = await alice.call('POST', `${path}/pause`, undefined, {
      headers: { 'if-match': `"${current}"` },
    });
    expect([paused.status, paused.body['status']]).toEqual([200, 'paused']);
    const staleResume = await alice.call('POST', `${path}/resume`, undefined, {
      headers: { 'if-match': `"${current}"` },
    });
    expect([staleResume.status, staleResume.body['error']]).toEqual([412, 'version_mismatch']);
    expect((await alice.call('GET', path)).body['status']).toBe('paused');
  });
});
