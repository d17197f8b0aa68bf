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
 * One pending team invitation per (account, email) (QA QQ, Low 3), on real Postgres and the
 * real billing-ledger: six invitations of one email sent at once made six links (all 201), two
 * in a row two, and once one was used the others stayed pending for an email that had a user.
 * Now one is made and the others answer 409 `invitation_pending` naming it; once the email has
 * a user, every other invitation of it (any account's, the operator's too) is set aside.
 */
describe('team invitations: one pending per (account, email) (real Postgres, real billing)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';
  let addresses = 0;

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard_team_invites' }),
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
    return new BffClient(app, `10.8.0.${addresses}`);
  };

  const signUp = async (email: string, invitation?: string) => {
    const client = browser();
    const answer = await client.call('POST', '/api/auth/sign-up', {
      email,
      password,
      ...(invitation ? { invitation } : {}),
    });
    return { client, answer };
  };

  const pendingEmails = async (owner: BffClient) =>
    ((await owner.call('GET', '/api/team')).body['invitations'] as Array<Record<string, string>>)
      .map((invitation) => invitation['email'])
      .sort();

  const invite = (owner: BffClient, email: string) =>
    owner.call('POST', '/api/team/invitations', { email });

  it('six invitations of one email at once make one; the rest, and one in a row, answer 409 invitation_pending naming it', async () => {
    const { client: owner, answer } = await signUp('owner-a@example.com');
    expect(answer.status).toBe(201);
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => invite(owner, 'zed@example.com')),
    );
    const made = burst.filter((one) => one.status === 201);
    expect(made).toHaveLength(1);
    const madeId = made[0]!.body['id'] as string;
    for (const refused of burst.filter((one) => one.status !== 201)) {
      expect([refused.status, refused.body['error']]).toEqual([409, 'invitation_pending']);
      expect(refused.body).toMatchObject({
        invitation: { id: madeId },
        fields: { email: expect.stringMatching(/already invited.*revoke/) },
      });
    }
    // In a row, in another letter case: the same email.
    const again = await invite(owner, 'Zed@Example.com');
    expect([again.status, again.body['error']]).toEqual([409, 'invitation_pending']);
    expect(await pendingEmails(owner)).toEqual(['zed@example.com']);

    // Revoked, the email may be invited again (a new link).
    expect((await owner.call('DELETE', `/api/team/invitations/${madeId}`)).status).toBe(204);
    expect((await invite(owner, 'zed@example.com')).status).toBe(201);

    // Expired (7 days), it holds no place: a new invitation is made, the old link says expired.
    const old = await invite(owner, 'yan@example.com');
    expect(old.status).toBe(201);
    clock.advance(7 * 24 * 3_600_000 + 1);
    // The session ended meanwhile (its lifetime): signed in again.
    const later = browser();
    const signedIn = await later.call('POST', '/api/auth/sign-in', {
      email: 'owner-a@example.com',
      password,
    });
    expect(signedIn.status).toBe(200);
    expect((await invite(later, 'yan@example.com')).status).toBe(201);
    const oldLink = await browser().call(
      'GET',
      `/api/auth/invitations/${String(old.body['code'])}`,
    );
    expect(oldLink.body).toMatchObject({ status: 'expired' });
  });

  it('once the email has a user, every other invitation of it is set aside: not listed, its link says why, its sign-up is email_taken', async () => {
    const teamB = (await signUp('owner-b@example.com')).client;
    const teamC = (await signUp('owner-c@example.com')).client;
    // One per (account, email): two accounts may each invite the same person.
    const fromB = await invite(teamB, 'kim@example.com');
    const fromC = await invite(teamC, 'kim@example.com');
    expect([fromB.status, fromC.status]).toEqual([201, 201]);

    const joined = await signUp('kim@example.com', fromB.body['code'] as string);
    expect(joined.answer.status).toBe(201);

    expect(await pendingEmails(teamC)).toEqual([]);
    const link = await browser().call('GET', `/api/auth/invitations/${String(fromC.body['code'])}`);
    expect(link.body).toMatchObject({ status: 'void', reason: 'email_has_user' });
    const late = await signUp('kim@example.com', fromC.body['code'] as string);
    expect([late.answer.status, late.answer.body['error']]).toEqual([409, 'email_taken']);
    // Its revoke finds it set aside already (the operator's rule: `invitation_not_pending`).
    const revoke = await teamC.call('DELETE', `/api/team/invitations/${String(fromC.body['id'])}`);
    expect([revoke.status, revoke.body['error']]).toEqual([409, 'invitation_not_pending']);

    // An email that signs up on its own (open sign-up) sets aside its invitations too.
    const forLee = await invite(teamB, 'lee@example.com');
    expect((await signUp('lee@example.com')).answer.status).toBe(201);
    expect(await pendingEmails(teamB)).toEqual([]);
    const leeLink = await browser().call(
      'GET',
      `/api/auth/invitations/${String(forLee.body['code'])}`,
    );
    expect(leeLink.body).toMatchObject({ status: 'void', reason: 'email_has_user' });
  });
});
