import { randomBytes } from 'node:crypto';
import { createAppDataSource, initializeDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { openSecret } from '@meridian/platform-secrets';
import {
  createTestDatabase,
  startBillingLedgerProcess,
  type BillingLedgerProcess,
  type TestDatabase,
} from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configSchema } from '../src/config/config';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { OPERATOR_TOKEN } from './support/billing-ledger.process';
import { BffClient } from './support/bff-client';

jest.setTimeout(180_000);

/** The dashboard's operator, made at start (the account page's key list). */
const OPERATOR = { email: 'ops@example.com', password: 'operator password 1' };

interface UserKey {
  accountId: string;
  apiKeyId: string;
  sealed: string;
}

/**
 * ADR 0110 amendment end to end, on real Postgres and the real billing-ledger: the operator
 * revokes a user's dashboard key, and the user's next call renews it (a new managed key, sealed
 * and stored) instead of answering 503 `account_key_rejected` forever; calls racing on two
 * dashboard replicas make one new key between them; an account billing will not issue a key
 * for still answers 503, once, with no loop.
 */
describe("renewing an account's revoked dashboard key (real Postgres, real billing-ledger)", () => {
  const secretsKey = randomBytes(32);
  const password = 'correct horse battery staple';
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  let billingDb: TestDatabase;
  let billing: BillingLedgerProcess;
  let billingApi: string;
  let db: TestDatabase;
  /** The test's own connections: what the user rows and billing's key rows hold. */
  let dashboardRows: DataSource;
  let billingRows: DataSource;
  /** Two replicas of the dashboard on one database, as a deployment runs them. */
  const replicas: NestFastifyApplication[] = [];
  let addresses = 0;

  beforeAll(async () => {
    [billingDb, db] = await Promise.all([
      createTestDatabase({ prefix: 'dashboard_renewal_billing' }),
      createTestDatabase({ prefix: 'dashboard_renewal' }),
    ]);
    billing = await startBillingLedgerProcess({
      operatorToken: OPERATOR_TOKEN,
      databaseUrl: billingDb.url,
      natsPrefix: `dash_renew_${process.pid}_${Date.now().toString(36)}`,
      env: { LEDGER_TICK_MS: '0', LOG_LEVEL: 'error' },
      startTimeoutMs: 45_000,
    });
    billingApi = `${billing.url}/api/v1`;
    dashboardRows = createAppDataSource(dataSourceOptions(db.url));
    await initializeDataSource(dashboardRows);
    await runMigrations(dashboardRows, SCHEMA);
    billingRows = createAppDataSource({
      url: billingDb.url,
      schema: 'billing',
      entities: [],
      migrations: [],
    });
    await initializeDataSource(billingRows);
    const config = configSchema.parse({
      HTTP_PORT: '0',
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      BILLING_API_URL: billingApi,
      WEBHOOKS_API_URL: 'http://127.0.0.1:1/api/v1',
      AUDIT_API_URL: 'http://127.0.0.1:1/v1',
      OPERATOR_TOKEN,
      DASHBOARD_SECRETS_KEY: secretsKey.toString('base64'),
      OPERATOR_EMAIL: OPERATOR.email,
      OPERATOR_PASSWORD: OPERATOR.password,
    });
    for (let i = 0; i < 2; i += 1) {
      const logger = pino({ level: 'silent' });
      const app = await createHttpApp(AppModule.forRoot(config, logger, { clock }), { logger });
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
      replicas.push(app);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((app) => app.close()));
    for (const source of [dashboardRows, billingRows])
      if (source?.isInitialized) await source.destroy();
    await billing?.stop();
    await Promise.all([billingDb?.drop(), db?.drop()]);
  });

  async function signUp(email: string): Promise<{ browser: BffClient; accountId: string }> {
    addresses += 1;
    const browser = new BffClient(replicas[0]!, `10.7.0.${addresses}`);
    const answer = await browser.call('POST', '/api/auth/sign-up', { email, password });
    expect(answer.status).toBe(201);
    return { browser, accountId: (answer.body['user'] as { account_id: string }).account_id };
  }

  async function userKey(email: string): Promise<UserKey> {
    const [row] = (await dashboardRows.query(
      'SELECT account_id, api_key_id, sealed_api_key FROM dashboard.users WHERE email = $1',
      [email],
    )) as Array<{ account_id: string; api_key_id: string; sealed_api_key: string }>;
    return { accountId: row!.account_id, apiKeyId: row!.api_key_id, sealed: row!.sealed_api_key };
  }

  async function billingCall(
    method: string,
    path: string,
    bearer: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${billingApi}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}` },
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  }

  /** What the operator does with a leaked dashboard key. */
  async function revoke(key: UserKey): Promise<void> {
    const answer = await billingCall(
      'DELETE',
      `/admin/accounts/${key.accountId}/api-keys/${key.apiKeyId}`,
      OPERATOR_TOKEN,
    );
    expect(answer.status).toBe(204);
  }

  async function billingKeys(
    accountId: string,
  ): Promise<Array<{ id: string; managed: boolean; revoked: boolean; scopes: string[] }>> {
    const rows = (await billingRows.query(
      `SELECT id, managed, revoked_at IS NOT NULL AS revoked, scopes FROM billing.api_keys
        WHERE account_id = $1 ORDER BY seq`,
      [accountId],
    )) as Array<{ id: string; managed: boolean; revoked: boolean; scopes: string[] }>;
    return rows;
  }

  async function renewals(app: NestFastifyApplication): Promise<Record<string, number>> {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const counts: Record<string, number> = {};
    for (const match of text.matchAll(
      /^dashboard_account_key_renewals_total\{[^}]*outcome="([a-z_]+)"[^}]*\} (\d+)$/gm,
    ))
      counts[match[1]!] = Number(match[2]);
    return counts;
  }

  it('renews a revoked key on the next call: the page answers, the old key stays revoked', async () => {
    const email = 'renewed@example.com';
    const { browser, accountId } = await signUp(email);
    const before = await userKey(email);
    const oldKey = openSecret(secretsKey, before.sealed);
    await revoke(before);

    const page = await browser.call('GET', '/api/relay/billing/account');
    expect([page.status, page.body['id']]).toEqual([200, accountId]);
    const after = await userKey(email);
    expect(after.apiKeyId).not.toBe(before.apiKeyId);
    expect(after.sealed).toMatch(/^v2\./); // sealed as sign-up seals, under the current key
    const newKey = openSecret(secretsKey, after.sealed);
    expect((await billingCall('GET', '/account', newKey)).status).toBe(200);
    expect((await billingCall('GET', '/account', oldKey)).status).toBe(401);
    expect(await billingKeys(accountId)).toEqual([
      {
        id: before.apiKeyId,
        managed: true,
        revoked: true,
        scopes: ['account', 'audit', 'plan', 'webhooks'],
      },
      {
        id: after.apiKeyId,
        managed: true,
        revoked: false,
        scopes: ['account', 'audit', 'plan', 'webhooks'],
      },
    ]);
    // The routes that read an answer themselves go the same way, with the new key now.
    const keys = await browser.call('GET', '/api/api-keys');
    expect([keys.status, keys.body['items']]).toEqual([200, []]);
    expect(await renewals(replicas[0]!)).toEqual({ renewed: 1 });
  });

  it('makes one new key for concurrent calls on two replicas (a row lock, one flight per process)', async () => {
    const email = 'racing@example.com';
    const { browser, accountId } = await signUp(email);
    const before = await userKey(email);
    await revoke(before);
    const base = [await renewals(replicas[0]!), await renewals(replicas[1]!)];

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? browser.call('GET', '/api/relay/billing/account/balance', undefined, {
              via: replicas[i % 4 < 2 ? 0 : 1],
            })
          : browser.call('GET', '/api/api-keys', undefined, { via: replicas[i % 4 < 2 ? 0 : 1] }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const keys = await billingKeys(accountId);
    expect(keys.map((key) => key.revoked)).toEqual([true, false]);
    expect((await userKey(email)).apiKeyId).toBe(keys[1]!.id);
    // One renewal made the key; every other call that had been refused used it.
    const counts = [await renewals(replicas[0]!), await renewals(replicas[1]!)];
    const made = counts.reduce(
      (n, c, i) => n + (c['renewed'] ?? 0) - (base[i]!['renewed'] ?? 0),
      0,
    );
    expect(made).toBe(1);
  });

  it('answers 503 account_key_rejected, once, when billing will not issue a key (account gone)', async () => {
    const email = 'gone@example.com';
    const { browser } = await signUp(email);
    const before = await userKey(email);
    await revoke(before);
    // The user's account unknown to billing (as one deleted there would be).
    const gone = 'acc_000000000000000000000000';
    await dashboardRows.query('UPDATE dashboard.users SET account_id = $2 WHERE email = $1', [
      email,
      gone,
    ]);
    const base = (await renewals(replicas[0]!))['refused'] ?? 0;

    for (const url of ['/api/relay/billing/account', '/api/api-keys']) {
      const answer = await browser.call('GET', url);
      expect([answer.status, answer.body['error']]).toEqual([503, 'account_key_rejected']);
    }
    expect((await renewals(replicas[0]!))['refused']).toBe(base + 2);
    expect(await billingKeys(gone)).toEqual([]);
    const after = await userKey(email);
    expect([after.apiKeyId, after.sealed]).toEqual([before.apiKeyId, before.sealed]);
  });

  it("lists the account's keys on the operator's page, the user's dashboard key named; revoked from there, it is renewed at the user's next call (QA: ids only in Postgres)", async () => {
    const email = 'listed@example.com';
    const { browser, accountId } = await signUp(email);
    const dashboardKey = await userKey(email);
    const made = await browser.call('POST', '/api/api-keys', {
      name: 'laptop',
      scopes: ['account'],
    });
    expect(made.status).toBe(201);
    const laptop = { id: String(made.body['id']), key: String(made.body['key']) };
    const operator = new BffClient(replicas[0]!, '10.7.1.1');
    expect((await operator.call('POST', '/api/auth/sign-in', OPERATOR)).status).toBe(200);
    const keysPath = `/api/operator/accounts/${accountId}/api-keys`;
    const list = async (query = '') => {
      const answer = await operator.call('GET', `${keysPath}${query}`);
      expect(answer.status).toBe(200);
      return answer.body['items'] as Array<Record<string, unknown>>;
    };
    const holders = (items: Array<Record<string, unknown>>) =>
      items.map((k) => [k['id'], k['managed'], k['dashboard_key'], k['dashboard_user']]);

    expect(holders(await list())).toEqual([
      [laptop.id, false, false, null],
      [dashboardKey.apiKeyId, true, true, email],
    ]);
    // Never a secret: billing's view, the dashboard's two fields added.
    expect(Object.keys((await list())[0]!).sort()).toEqual(
      [
        'created_at',
        'created_by',
        'dashboard_key',
        'dashboard_user',
        'hint',
        'id',
        'managed',
        'name',
        'revoked_at',
        'scopes',
      ].sort(),
    );
    // The customer's session cannot reach it, nor revoke through it.
    expect((await browser.call('GET', keysPath)).status).toBe(403);
    expect((await browser.call('DELETE', `${keysPath}/${laptop.id}`)).status).toBe(403);

    // The operator revokes the leaked laptop key: billing refuses it at once.
    expect((await operator.call('DELETE', `${keysPath}/${laptop.id}`)).status).toBe(204);
    expect((await billingCall('GET', '/account', laptop.key)).status).toBe(401);
    const again = await operator.call('DELETE', `${keysPath}/${laptop.id}`);
    // A repeat says when it was revoked (409), not a 404 that reads as a wrong id.
    expect([again.status, again.body['error']]).toEqual([409, 'already_revoked']);
    expect(again.body['revoked_at']).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    // The dashboard's key: the user's next call renews it.
    const oldKey = openSecret(secretsKey, dashboardKey.sealed);
    expect((await operator.call('DELETE', `${keysPath}/${dashboardKey.apiKeyId}`)).status).toBe(
      204,
    );
    expect((await billingCall('GET', '/account', oldKey)).status).toBe(401);
    const page = await browser.call('GET', '/api/relay/billing/account');
    expect([page.status, page.body['id']]).toEqual([200, accountId]);
    const renewed = await userKey(email);
    expect(renewed.apiKeyId).not.toBe(dashboardKey.apiKeyId);

    // Active keys by default: the renewed one, the user's; all: the revoked old one, no user.
    expect(holders(await list())).toEqual([[renewed.apiKeyId, true, true, email]]);
    const all = await list('?state=all');
    expect(holders(all)).toEqual([
      [renewed.apiKeyId, true, true, email],
      [laptop.id, false, false, null],
      [dashboardKey.apiKeyId, true, true, null],
    ]);
    expect(all.map((k) => k['revoked_at'] !== null)).toEqual([false, true, true]);

    // Errors: the BFF's query check, billing's 404 for an account it does not know.
    const bad = await operator.call('GET', `${keysPath}?state=leaked`);
    expect([bad.status, bad.body['error']]).toEqual([400, 'invalid_query']);
    const unknown = await operator.call(
      'GET',
      '/api/operator/accounts/acc_000000000000000000000000/api-keys',
    );
    expect([unknown.status, unknown.body['error']]).toEqual([404, 'not_found']);
  });
});
