import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { UsersRepository } from '../src/auth/users.repository';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import {
  OPERATOR_TOKEN,
  startBillingLedger,
  type RunningBillingLedger,
} from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient as Client } from './support/bff-client';

/**
 * QA: a sign-up whose dashboard failed after billing made the account (the process died, the
 * user insert failed, billing's answer was lost) left that account unused, and the user's retry
 * made a second one (ADR 0601 amendment). Real Postgres, real billing-ledger; the failure is
 * the users repository's insert, billing is not mocked.
 */
describe('dashboard sign-up retried after a failure past billing (real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard_retry' }),
    ]);
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    app = await startBff(bffEnv({ databaseUrl: db.url, billingApiUrl: billing.apiUrl }), { clock });
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  let addresses = 0;
  const signUp = async (email: string, extra: Record<string, unknown> = {}) => {
    addresses += 1;
    const client = new Client(app, `10.1.0.${addresses}`);
    const answer = await client.call('POST', '/api/auth/sign-up', { email, password, ...extra });
    return { client, answer, user: answer.body['user'] as Record<string, string> | undefined };
  };
  /** The billing accounts with this name, counted in billing itself. */
  const accountsNamed = async (name: string) => {
    const answer = await fetch(
      `${billing.apiUrl}/admin/accounts?limit=200&q=${encodeURIComponent(name)}`,
      { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
    );
    const { items } = (await answer.json()) as { items: Array<{ id: string; name: string }> };
    return items.filter((item) => item.name === name).map((item) => item.id);
  };
  /** The next user insert fails, after billing answered: as if the dashboard died there. */
  const failNextInsert = () =>
    jest
      .spyOn(app.get(UsersRepository), 'insert')
      .mockRejectedValueOnce(new Error('the dashboard died before its user row'));

  afterEach(() => jest.restoreAllMocks());

  it('the retry makes no second billing account: it gets the one the failed try made, with a working key', async () => {
    failNextInsert();
    const failed = await signUp('retry@example.com', { name: 'Retry Ltd' });
    expect(failed.answer.status).toBeGreaterThanOrEqual(500);
    // Billing made the account; no user holds it.
    const made = await accountsNamed('Retry Ltd');
    expect(made).toHaveLength(1);

    // Retried with another display name: not refused, and the same account.
    const retry = await signUp('retry@example.com', { name: 'Another name' });
    expect(retry.answer.status).toBe(201);
    expect(retry.user).toMatchObject({ email: 'retry@example.com', account_id: made[0] });
    expect(await accountsNamed('Retry Ltd')).toEqual(made);
    expect(await accountsNamed('Another name')).toEqual([]);
    // The key the dashboard now holds works (the failed try's key was revoked by billing).
    const account = await retry.client.call('GET', '/api/relay/billing/account');
    expect([account.status, account.body['id']]).toEqual([200, made[0]]);
  });

  it('a retry after the failed try sends nothing else: another failure, then one account still', async () => {
    failNextInsert();
    expect((await signUp('twice@example.com')).answer.status).toBeGreaterThanOrEqual(500);
    failNextInsert();
    expect((await signUp('twice@example.com')).answer.status).toBeGreaterThanOrEqual(500);
    const third = await signUp('twice@example.com');
    expect(third.answer.status).toBe(201);
    expect(await accountsNamed('twice@example.com')).toEqual([third.user!['account_id']]);
  });

  it('a stored request billing refuses as another (409) is replaced by a new one: the email is never stuck', async () => {
    failNextInsert();
    expect((await signUp('stuck@example.com')).answer.status).toBeGreaterThanOrEqual(500);
    const [made] = await accountsNamed('stuck@example.com');
    // As if billing now read the stored body otherwise: the same key with another request.
    await app.get(DataSource).query(
      `UPDATE dashboard.sign_up_requests SET body = jsonb_set(body, '{name}', '"Changed"')
          WHERE email = 'stuck@example.com'`,
    );
    const retry = await signUp('stuck@example.com');
    expect(retry.answer.status).toBe(201);
    expect(retry.user!['account_id']).not.toBe(made);
    const rows = (await app
      .get(DataSource)
      .query(
        `SELECT 1 FROM dashboard.sign_up_requests WHERE email = 'stuck@example.com'`,
      )) as unknown[];
    expect(rows).toEqual([]);
  });

  it("the same sign-up sent again counts once against the address's hourly sign-ups: a retry replaying the stored request, a double submit, a repeat answered 409", async () => {
    // One browser each, behind one address.
    const attempt = (email: string) =>
      new Client(app, '192.0.2.60').call('POST', '/api/auth/sign-up', {
        email,
        password,
        name: 'Once',
      });
    failNextInsert();
    expect((await attempt('replayed@example.com')).status).toBeGreaterThanOrEqual(500);
    // The retry replays the stored billing request: the same sign-up, not a second one.
    expect((await attempt('replayed@example.com')).status).toBe(201);
    // A double submit: one user, the other answered 409, one attempt.
    const both = await Promise.all([attempt('double@example.com'), attempt('double@example.com')]);
    expect(both.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect((await attempt('double@example.com')).body['error']).toBe('email_taken');
    // Two sign-ups so far: three more are within the five an hour, the sixth is refused.
    const more = [];
    for (const n of [3, 4, 5, 6]) more.push((await attempt(`once${n}@example.com`)).status);
    expect(more).toEqual([201, 201, 201, 429]);
    // At the limit, a sign-up already counted is answered as it was, not 429.
    const again = await attempt('double@example.com');
    expect([again.status, again.body['error']]).toEqual([409, 'email_taken']);
  });

  it('once the user is written, a later sign-up of the email is a new request: leaving a team and signing up again makes a new account, not the one left', async () => {
    const alice = await signUp('alice@example.com');
    expect(alice.answer.status).toBe(201);
    const first = alice.user!['account_id']!;
    const invited = await alice.client.call('POST', '/api/team/invitations', {
      email: 'bob@example.com',
      role: 'owner',
    });
    expect(invited.status).toBe(201);
    const bob = await signUp('bob@example.com', { invitation: invited.body['code'] });
    expect(bob.user).toMatchObject({ account_id: first, account_role: 'owner' });
    expect((await alice.client.call('POST', '/api/team/leave')).status).toBe(204);

    const again = await signUp('alice@example.com');
    expect(again.answer.status).toBe(201);
    expect(again.user!['account_id']).not.toBe(first);
    expect((await accountsNamed('alice@example.com')).sort()).toEqual(
      [first, again.user!['account_id']].sort(),
    );
  });
});
