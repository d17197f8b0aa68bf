import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient as Client, type BffAnswer } from './support/bff-client';

/** Rejects when `work` has not settled in `ms`: a deadlock fails the test instead of hanging. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const statuses = (answers: BffAnswer[]) =>
  answers.reduce<Record<number, number>>((count, answer) => {
    count[answer.status] = (count[answer.status] ?? 0) + 1;
    return count;
  }, {});

describe('dashboard auth under concurrent requests (real Postgres, real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let dashboardDb: DataSource;
  // Fixed: every attempt of a burst falls in the throttles' windows.
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard' }),
    ]);
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    app = await startBff(bffEnv({ databaseUrl: db.url, billingApiUrl: billing.apiUrl }), {
      clock,
    });
    dashboardDb = app.get(DataSource);
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  const signUp = (client: Client, email: string) =>
    client.call('POST', '/api/auth/sign-up', { email, password });
  const signIn = (client: Client, email: string, attempt: string) =>
    client.call('POST', '/api/auth/sign-in', { email, password: attempt });

  it('answers every one of more concurrent sign-ups than its pool has connections, and serves sessions after (QA H1)', async () => {
    // The pool has 5 connections (src/db/data-source.ts); 24 sign-ups from 4 addresses, 6 each:
    // the address throttle (SIGNUP_MAX_PER_ADDRESS 5) passes 20 of them to billing at once.
    const clients = Array.from({ length: 24 }, (_, i) => new Client(app, `198.51.100.${i % 4}`));
    const answers = await within(
      45_000,
      'concurrent sign-ups',
      Promise.all(clients.map((client, i) => signUp(client, `burst-${i}@example.com`))),
    );
    expect(statuses(answers)).toEqual({ 201: 20, 429: 4 });
    // The dashboard still serves: a session, and a sign-up after the burst.
    const signedUp = clients[answers.findIndex((answer) => answer.status === 201)]!;
    const session = await within(5_000, 'session', signedUp.call('GET', '/api/auth/session'));
    expect(session.status).toBe(200);
    const later = await within(
      10_000,
      'later sign-up',
      signUp(new Client(app, '198.51.100.200'), 'after-burst@example.com'),
    );
    expect(later.status).toBe(201);
    const idle = (await dashboardDb.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = 'dashboard' AND state = 'idle in transaction'`,
    )) as Array<{ n: number }>;
    expect(idle[0]!.n).toBe(0);
  });

  it('checks no more sign-ups from one address than SIGNUP_MAX_PER_ADDRESS when they come at once (QA H2)', async () => {
    const clients = Array.from({ length: 10 }, () => new Client(app, '198.51.100.10'));
    const answers = await within(
      30_000,
      'sign-up burst',
      Promise.all(clients.map((client, i) => signUp(client, `one-address-${i}@example.com`))),
    );
    expect(statuses(answers)).toEqual({ 201: 5, 429: 5 });
    const made = (await dashboardDb.query(
      `SELECT count(*)::int AS n FROM dashboard.users WHERE email LIKE 'one-address-%'`,
    )) as Array<{ n: number }>;
    expect(made[0]!.n).toBe(5);
  });

  it('checks no more passwords of a burst than the (email, address) limit, and refuses the right one after (QA H2)', async () => {
    expect((await signUp(new Client(app, '198.51.100.20'), 'target@example.com')).status).toBe(201);
    const attacker = '198.51.100.21';
    const wrong = await within(
      30_000,
      'sign-in burst',
      Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          signIn(new Client(app, attacker), 'target@example.com', `wrong ${i}`),
        ),
      ),
    );
    // LOGIN_MAX_FAILURES 5: five checked, the rest refused before any password check.
    expect(statuses(wrong)).toEqual({ 401: 5, 429: 35 });
    const right = await signIn(new Client(app, attacker), 'target@example.com', password);
    expect([right.status, right.body['error']]).toEqual([429, 'too_many_attempts']);
  });

  it('lets through at most the limit of a burst that holds the right password, and a success is no failure', async () => {
    expect((await signUp(new Client(app, '198.51.100.30'), 'mixed@example.com')).status).toBe(201);
    const from = '198.51.100.31';
    const attempts = Array.from({ length: 11 }, (_, i) => (i === 10 ? password : `wrong ${i}`));
    const answers = await within(
      30_000,
      'mixed burst',
      Promise.all(
        attempts.map((attempt) => signIn(new Client(app, from), 'mixed@example.com', attempt)),
      ),
    );
    // Sent last, the right password comes after the five failures the pair may have: refused.
    expect(statuses(answers)).toEqual({ 401: 5, 429: 6 });
    // The email's and the address's rows count the failures only, not the success (if any).
    const failures = answers.filter((answer) => answer.status === 401).length;
    const rows = (await dashboardDb.query(
      `SELECT key, count(*)::int AS n FROM dashboard.login_failures
        WHERE key = ANY($1) GROUP BY key ORDER BY key`,
      [['email:mixed@example.com', `ip:${from}`]],
    )) as Array<{ key: string; n: number }>;
    expect(rows).toEqual([
      { key: 'email:mixed@example.com', n: failures },
      { key: `ip:${from}`, n: failures },
    ]);
  });

  it('a success in turn is no failure: the email and the address keep only the failures', async () => {
    expect((await signUp(new Client(app, '198.51.100.40'), 'single@example.com')).status).toBe(201);
    const from = new Client(app, '198.51.100.41');
    expect((await signIn(from, 'single@example.com', 'wrong')).status).toBe(401);
    expect((await signIn(from, 'single@example.com', password)).status).toBe(200);
    const rows = (await dashboardDb.query(
      `SELECT key, count(*)::int AS n FROM dashboard.login_failures
        WHERE key = ANY($1) GROUP BY key ORDER BY key`,
      [
        [
          'email:single@example.com',
          'email:single@example.com:ip:198.51.100.41',
          'ip:198.51.100.41',
        ],
      ],
    )) as Array<{ key: string; n: number }>;
    // The pair's failures go with the success (as before); one failure each for the others.
    expect(rows).toEqual([
      { key: 'email:single@example.com', n: 1 },
      { key: 'ip:198.51.100.41', n: 1 },
    ]);
  });

  it('answers 503 database_unavailable, not a hang, while its pool stays full past the acquire wait', async () => {
    const client = new Client(app, '198.51.100.50');
    expect((await signUp(client, 'pool-full@example.com')).status).toBe(201);
    // Every pooled connection held (5, src/db/data-source.ts): the next query waits for one.
    const holders = Array.from({ length: 5 }, () => dashboardDb.createQueryRunner());
    try {
      await Promise.all(holders.map((holder) => holder.connect()));
      const started = Date.now();
      const answer = await within(20_000, 'session', client.call('GET', '/api/auth/session'));
      expect([answer.status, answer.body['error']]).toEqual([503, 'database_unavailable']);
      // Bounded by platform-db's DEFAULT_ACQUIRE_TIMEOUT_MS (10 s).
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    } finally {
      await Promise.all(holders.map((holder) => holder.release()));
    }
    expect((await client.call('GET', '/api/auth/session')).status).toBe(200);
  }, 40_000);
});
