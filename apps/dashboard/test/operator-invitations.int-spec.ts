import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient } from './support/bff-client';

jest.setTimeout(180_000);

/**
 * The operator's sign-up invitations under the team invitations' rule (QA, Low), on real
 * Postgres and the real billing-ledger: two `POST /api/operator/invitations` of one email made
 * two valid links, and none could be listed nor revoked (a wrong or leaked link lived 7 days).
 * Now one pending invitation per email (409 `invitation_pending` naming it), a list of the
 * pending ones (never a code) and a revoke whose link then says so. Also a repeated key revoke
 * on the operator's account page: 409 `already_revoked`, not billing's bare 404.
 */
describe('operator invitations: one pending per email, listed, revoked (real Postgres, real billing)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';
  let addresses = 0;

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard_operator_invites' }),
    ]);
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    app = await startBff(bffEnv({ databaseUrl: db.url, billingApiUrl: billing.apiUrl }), { clock });
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  const browser = () => {
    addresses += 1;
    return new BffClient(app, `10.9.0.${addresses}`);
  };

  const operator = async () => {
    const client = browser();
    const signedIn = await client.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(signedIn.status).toBe(200);
    return client;
  };

  const invite = (ops: BffClient, email: string) =>
    ops.call('POST', '/api/operator/invitations', { email });

  const pending = async (ops: BffClient) => {
    const answer = await ops.call('GET', '/api/operator/invitations');
    expect(answer.status).toBe(200);
    return answer.body['items'] as Array<Record<string, unknown>>;
  };

  it('invitations of one email at once make one; the rest, and one in a row, answer 409 invitation_pending naming it', async () => {
    const ops = await operator();
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => invite(ops, 'zoe@example.com')),
    );
    const made = burst.filter((one) => one.status === 201);
    expect(made).toHaveLength(1);
    const madeId = made[0]!.body['id'] as string;
    expect(madeId).toMatch(/^inv_/);
    for (const refused of burst.filter((one) => one.status !== 201)) {
      expect([refused.status, refused.body['error']]).toEqual([409, 'invitation_pending']);
      expect(refused.body).toMatchObject({
        invitation: { id: madeId, expires_at: made[0]!.body['expires_at'] },
        fields: { email: expect.stringMatching(/already invited.*revoke/) },
      });
    }
    const again = await invite(ops, 'Zoe@Example.com');
    expect([again.status, again.body['error']]).toEqual([409, 'invitation_pending']);
    expect((await pending(ops)).map((i) => i['email'])).toEqual(['zoe@example.com']);
  });

  it('lists pending invitations with who made them and never a code; a revoked link says so at sign-up', async () => {
    const ops = await operator();
    const made = await invite(ops, 'ron@example.com');
    expect(made.status).toBe(201);
    const code = String(made.body['code']);
    const id = String(made.body['id']);
    const listed = await ops.call('GET', '/api/operator/invitations');
    expect(JSON.stringify(listed.body)).not.toContain(code);
    const ron = (listed.body['items'] as Array<Record<string, unknown>>).find(
      (i) => i['id'] === id,
    );
    expect(ron).toEqual({
      id,
      email: 'ron@example.com',
      created_at: clock.now().toISOString(),
      expires_at: made.body['expires_at'],
      created_by: { id: expect.stringMatching(/^usr_/), email: 'ops@example.com' },
    });

    expect((await ops.call('DELETE', `/api/operator/invitations/${id}`)).status).toBe(204);
    expect((await pending(ops)).map((i) => i['id'])).not.toContain(id);
    // A repeat says it is revoked already; an id of none is 404.
    const repeat = await ops.call('DELETE', `/api/operator/invitations/${id}`);
    expect([repeat.status, repeat.body['error']]).toEqual([409, 'already_revoked']);
    const unknown = await ops.call('DELETE', '/api/operator/invitations/inv_nothing');
    expect([unknown.status, unknown.body['error']]).toEqual([404, 'invitation_not_found']);

    // The link says it was revoked, on load and at sign-up (sign-up by invitation only).
    const guest = browser();
    expect((await guest.call('GET', `/api/auth/invitations/${code}`)).body).toEqual({
      status: 'void',
      reason: 'revoked',
      expires_at: made.body['expires_at'],
    });
    expect(
      (await ops.call('PUT', '/api/operator/settings', { signup_mode: 'invite' })).status,
    ).toBe(200);
    const refused = await guest.call('POST', '/api/auth/sign-up', {
      email: 'ron@example.com',
      password,
      invitation: code,
    });
    expect([refused.status, refused.body['error']]).toEqual([403, 'invitation_revoked']);
    expect(refused.body['message']).toMatch(/revoked by an operator/);

    // Revoked, the email may be invited again; the new link signs up.
    const fresh = await invite(ops, 'ron@example.com');
    expect(fresh.status).toBe(201);
    const signedUp = await guest.call('POST', '/api/auth/sign-up', {
      email: 'ron@example.com',
      password,
      invitation: String(fresh.body['code']),
    });
    expect(signedUp.status).toBe(201);
    // Used, it is no longer pending nor revocable.
    expect((await pending(ops)).map((i) => i['email'])).not.toContain('ron@example.com');
    const used = await ops.call('DELETE', `/api/operator/invitations/${String(fresh.body['id'])}`);
    expect([used.status, used.body['error']]).toEqual([409, 'invitation_not_pending']);
    expect((await ops.call('PUT', '/api/operator/settings', { signup_mode: 'open' })).status).toBe(
      200,
    );

    // A customer gets 403 from both routes.
    const customer = browser();
    expect(
      (await customer.call('POST', '/api/auth/sign-up', { email: 'cy@example.com', password }))
        .status,
    ).toBe(201);
    expect((await customer.call('GET', '/api/operator/invitations')).status).toBe(403);
    expect((await customer.call('DELETE', `/api/operator/invitations/${id}`)).status).toBe(403);
  });

  it('an expired invitation holds no place: the email is invited again', async () => {
    const ops = await operator();
    const old = await invite(ops, 'eli@example.com');
    expect(old.status).toBe(201);
    clock.advance(7 * 24 * 3_600_000 + 1);
    // The session ended meanwhile (its lifetime): signed in again.
    const later = await operator();
    expect((await pending(later)).map((i) => i['email'])).not.toContain('eli@example.com');
    expect((await invite(later, 'eli@example.com')).status).toBe(201);
    expect(
      (await browser().call('GET', `/api/auth/invitations/${String(old.body['code'])}`)).body,
    ).toMatchObject({ status: 'expired' });
  });

  it("a repeated revoke of an account's key answers 409 already_revoked; a key never had is 404", async () => {
    const customer = browser();
    const signedUp = await customer.call('POST', '/api/auth/sign-up', {
      email: 'kay@example.com',
      password,
    });
    expect(signedUp.status).toBe(201);
    const accountId = String((signedUp.body['user'] as Record<string, unknown>)['account_id']);
    const key = await customer.call('POST', '/api/api-keys', { name: 'ci', scopes: ['audit'] });
    expect(key.status).toBe(201);
    const ops = await operator();
    const url = `/api/operator/accounts/${accountId}/api-keys/${String(key.body['id'])}`;
    expect((await ops.call('DELETE', url)).status).toBe(204);
    const repeat = await ops.call('DELETE', url);
    expect([repeat.status, repeat.body['error']]).toEqual([409, 'already_revoked']);
    // Billing's time of the revoke (its own clock), as its list of the account's keys says.
    expect(repeat.body['revoked_at']).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(repeat.body['message']).toMatch(/revoked at/);
    const never = await ops.call(
      'DELETE',
      `/api/operator/accounts/${accountId}/api-keys/key_000000000000000000000000`,
    );
    expect([never.status, never.body['error']]).toEqual([404, 'not_found']);
  });
});
