import { randomBytes } from 'node:crypto';
import { createAppDataSource, initializeDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { createTestDatabase, runAppScript, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import { sealSecret, SecretKeyRing, secretsKeyId } from '@meridian/platform-secrets';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configSchema } from '../src/config/config';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { ApiKeyReseal } from '../src/secrets/api-key-reseal';
import {
  OPERATOR_TOKEN,
  startBillingLedger,
  type RunningBillingLedger,
} from './support/billing-ledger.process';
import { BffClient as Client, type BffAnswer } from './support/bff-client';

jest.setTimeout(180_000);

/**
 * ADR 0603 end to end, on real Postgres and the real billing-ledger: users signed up under key A
 * (one of them sealed before the key ring, `v1`); the dashboard started with B current and A
 * previous, where they sign in and call billing with their keys; the reseal (two runs at once
 * while the dashboard serves, then the command); B alone; a key the ring does not hold.
 */
describe('rotating DASHBOARD_SECRETS_KEY (real Postgres, real billing-ledger)', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const keyC = randomBytes(32);
  const b64 = (key: Buffer) => key.toString('base64');
  const idOf = (key: Buffer) => secretsKeyId(key);
  const password = 'correct horse battery staple';
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  /** The test's own connection: what a user row holds. */
  let dataSource: DataSource;
  let app: NestFastifyApplication | undefined;
  let env: Record<string, string>;
  let addresses = 0;
  const users: Array<{ email: string; accountId: string }> = [];

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard_rotation' }),
    ]);
    dataSource = createAppDataSource(dataSourceOptions(db.url));
    await initializeDataSource(dataSource);
    await runMigrations(dataSource, SCHEMA);
    env = {
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      BILLING_API_URL: billing.apiUrl,
      WEBHOOKS_API_URL: 'http://127.0.0.1:1/api/v1',
      AUDIT_API_URL: 'http://127.0.0.1:1/v1',
      OPERATOR_TOKEN,
    };
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    if (dataSource?.isInitialized) await dataSource.destroy();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  /** The dashboard (in process) started again with these keys, as a rollout starts a pod. */
  async function start(keys: { current: Buffer; previous?: Buffer[] }): Promise<void> {
    await app?.close();
    const config = configSchema.parse({
      ...env,
      HTTP_PORT: '0',
      DASHBOARD_SECRETS_KEY: b64(keys.current),
      ...(keys.previous
        ? { DASHBOARD_SECRETS_PREVIOUS_KEYS: keys.previous.map(b64).join(',') }
        : {}),
    });
    const logger = pino({ level: 'silent' });
    app = await createHttpApp(AppModule.forRoot(config, logger, { clock }), { logger });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  }

  const client = () => {
    addresses += 1;
    return new Client(() => app!, `10.9.0.${addresses}`);
  };

  async function signUp(email: string): Promise<void> {
    const answer = await client().call('POST', '/api/auth/sign-up', { email, password });
    expect(answer.status).toBe(201);
    users.push({ email, accountId: (answer.body['user'] as { account_id: string }).account_id });
  }

  /** Signs in and calls billing-ledger through the relay with the account's sealed key. */
  async function billingAnswer(user: { email: string }): Promise<BffAnswer> {
    const c = client();
    const signIn = await c.call('POST', '/api/auth/sign-in', { email: user.email, password });
    expect(signIn.status).toBe(200);
    return c.call('GET', '/api/relay/billing/account');
  }

  async function everyoneCallsBilling(): Promise<void> {
    for (const user of users) {
      const answer = await billingAnswer(user);
      expect({ email: user.email, status: answer.status, id: answer.body['id'] }).toEqual({
        email: user.email,
        status: 200,
        id: user.accountId,
      });
    }
  }

  const sealedOf = async (email: string): Promise<string> =>
    (
      (await dataSource.query('SELECT sealed_api_key FROM dashboard.users WHERE email = $1', [
        email,
      ])) as [{ sealed_api_key: string }]
    )[0].sealed_api_key;

  /**
   * `dashboard_sealed_api_keys` as served on /metrics: `key_id/current` → count. A count is kept
   * a minute (scrapes do not each scan the table): the clock moves past it first.
   */
  async function gauge(): Promise<Record<string, number>> {
    clock.advance(60_000);
    const text = (await app!.inject({ method: 'GET', url: '/metrics' })).body;
    const counts: Record<string, number> = {};
    for (const line of text.split('\n')) {
      const m = /^dashboard_sealed_api_keys\{(.*)\} (\d+)$/.exec(line);
      if (!m) continue;
      const key = /key_id="([^"]*)"/.exec(m[1]!)![1]!;
      const current = /current="([^"]*)"/.exec(m[1]!)![1]!;
      counts[`${key}/${current}`] = Number(m[2]);
    }
    return counts;
  }

  const commandEnv = (keys: { current: Buffer; previous?: Buffer[] }) => ({
    ...env,
    HTTP_PORT: undefined,
    DASHBOARD_SECRETS_KEY: b64(keys.current),
    DASHBOARD_SECRETS_PREVIOUS_KEYS: keys.previous?.map(b64).join(','),
  });

  it('users sign up under key A; one key stays as sealed before the key ring (v1)', async () => {
    await start({ current: keyA });
    for (const email of ['a1@example.com', 'a2@example.com', 'legacy@example.com'])
      await signUp(email);
    expect(await sealedOf('a1@example.com')).toMatch(new RegExp(`^v2\\.${idOf(keyA)}\\.`));
    // The value the dashboard stored before the key ring: the same key, v1, no key id.
    const plain = new SecretKeyRing(keyA).open(await sealedOf('legacy@example.com'));
    await dataSource.query('UPDATE dashboard.users SET sealed_api_key = $2 WHERE email = $1', [
      'legacy@example.com',
      sealSecret(keyA, plain),
    ]);
    expect(await sealedOf('legacy@example.com')).toMatch(/^v1\./);
    await everyoneCallsBilling();
  });

  it('B current, A previous: every user signs in and calls billing; a new sign-up is sealed under B; the gauge counts what waits for the reseal', async () => {
    await start({ current: keyB, previous: [keyA] });
    await everyoneCallsBilling();
    await signUp('b1@example.com');
    expect(await sealedOf('b1@example.com')).toMatch(new RegExp(`^v2\\.${idOf(keyB)}\\.`));
    expect(await gauge()).toEqual({
      [`${idOf(keyA)}/false`]: 2,
      'none/false': 1,
      [`${idOf(keyB)}/true`]: 1,
    });
  });

  it('the reseal, two runs at once in batches of one while users call billing, seals each key once under B; run again it does nothing; the command exits 0', async () => {
    const ring = new SecretKeyRing(keyB, [keyA]);
    const logger = pino({ level: 'silent' });
    const run = () => new ApiKeyReseal({ dataSource, ring, logger, batchSize: 1 }).run();
    const [first, second] = await Promise.all([
      run(),
      run(),
      ...users.map(async (user) => expect((await billingAnswer(user)).status).toBe(200)),
    ]);
    expect(first!.resealed + second!.resealed).toBe(3);
    for (const report of [first!, second!])
      expect(report).toMatchObject({
        currentKeyId: idOf(keyB),
        failed: [],
        left: 0,
        byKey: { [idOf(keyB)]: 4 },
      });
    for (const user of users)
      expect(await sealedOf(user.email)).toMatch(new RegExp(`^v2\\.${idOf(keyB)}\\.`));
    expect(await run()).toMatchObject({ resealed: 0, left: 0 });
    await expect(
      runAppScript('apps/dashboard/src/reseal.ts', commandEnv({ current: keyB, previous: [keyA] })),
    ).resolves.toBeUndefined();
    await everyoneCallsBilling();
  });

  it('B alone (A removed): every user signs in and calls billing; the gauge shows every key under B', async () => {
    await start({ current: keyB });
    await everyoneCallsBilling();
    expect(await gauge()).toEqual({ [`${idOf(keyB)}/true`]: 4 });
  });

  it('a key the ring does not hold: sign-in works, billing calls answer 503 secret_unavailable (not a 500), counted; the command exits 1 and changes nothing', async () => {
    await start({ current: keyC });
    const before = await sealedOf('a1@example.com');
    const answer = await billingAnswer(users[0]!);
    expect([answer.status, answer.body['error']]).toEqual([503, 'secret_unavailable']);
    const metrics = (await app!.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(
      /^dashboard_secret_open_failures_total\{[^}]*reason="unknown_key"[^}]*\} 1$/m,
    );
    await expect(
      runAppScript('apps/dashboard/src/reseal.ts', commandEnv({ current: keyC })),
    ).rejects.toThrow(/"reason":"unknown_key".*"left":4/s);
    expect(await sealedOf('a1@example.com')).toBe(before);
  });
});
