import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import {
  OPERATOR_TOKEN,
  startBillingLedger,
  type RunningBillingLedger,
} from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient } from './support/bff-client';

jest.setTimeout(180_000);

/**
 * Teams (ADR 0604) on real Postgres and the real billing-ledger: an owner invites a colleague,
 * who joins the same billing account with a managed key of their own (whatever the sign-up
 * mode), a member reads the team but manages nothing, another account's ids answer 404, a
 * removed member's key is revoked in billing and their session ends, the last owner stays (a
 * revoked invitation kept, its link saying so, as the operator's); an
 * owner promotes and demotes (never the last owner, even two demotions at once), and a user
 * leaves on their own (key revoked, sessions ended) unless they are the last owner.
 */
describe('dashboard teams (real Postgres, real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let rows: DataSource;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';
  let addresses = 0;

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard_team' }),
    ]);
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    app = await startBff(bffEnv({ databaseUrl: db.url, billingApiUrl: billing.apiUrl }), { clock });
    rows = app.get(DataSource);
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  const browser = () => {
    addresses += 1;
    return new BffClient(app, `10.9.0.${addresses}`);
  };

  const signUp = async (email: string, invitation?: string) => {
    const client = browser();
    const answer = await client.call('POST', '/api/auth/sign-up', {
      email,
      password,
      ...(invitation ? { invitation } : {}),
    });
    return { client, answer, user: answer.body['user'] as Record<string, string> | undefined };
  };

  const keyIdOf = async (email: string): Promise<string> => {
    const [row] = (await rows.query('SELECT api_key_id FROM dashboard.users WHERE email = $1', [
      email,
    ])) as Array<{ api_key_id: string }>;
    return row!.api_key_id;
  };

  const activeKeyIds = async (accountId: string): Promise<string[]> => {
    const answer = await fetch(
      `${billing.apiUrl}/admin/accounts/${accountId}/api-keys?state=active&limit=100`,
      { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } },
    );
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { items: Array<{ id: string }> }).items.map((key) => key.id);
  };

  /** The operator, signed in, with sign-ups set to `mode`. */
  const operatorWithSignUps = async (mode: 'open' | 'invite') => {
    const operator = browser();
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(
      (await operator.call('PUT', '/api/operator/settings', { signup_mode: mode })).status,
    ).toBe(200);
    return operator;
  };

  it('an owner invites a colleague who joins the same billing account; members manage nothing; removal revokes and signs out; the last owner stays', async () => {
    const alice = await signUp('alice@example.com');
    expect(alice.answer.status).toBe(201);
    const accountId = alice.user!['account_id']!;
    expect(alice.user!['account_role']).toBe('owner');
    const carol = await signUp('carol@example.com');
    expect(carol.answer.status).toBe(201);
    // An invitation for an email that signs up on its own first (open mode, below).
    const forDave = await alice.client.call('POST', '/api/team/invitations', {
      email: 'dave@example.com',
    });
    expect(forDave.status).toBe(201);
    expect((await signUp('dave@example.com')).answer.status).toBe(201);

    // Team invitations work whatever the sign-up mode: closed from here on.
    const operator = await operatorWithSignUps('invite');
    const credited = await operator.call('POST', `/api/operator/accounts/${accountId}/top-ups`, {
      cu: 4_321,
    });
    expect(credited.status).toBe(201);

    // The owner's invitation: CSRF as every change, a valid body, one account per user.
    expect(
      (
        await alice.client.call(
          'POST',
          '/api/team/invitations',
          { email: 'bob@example.com' },
          { csrf: false },
        )
      ).status,
    ).toBe(403);
    const malformed = await alice.client.call('POST', '/api/team/invitations', {
      email: 'not an email',
      role: 'admin',
    });
    expect([malformed.status, malformed.body['error']]).toEqual([400, 'malformed_body']);
    const taken = await alice.client.call('POST', '/api/team/invitations', {
      email: 'Carol@Example.com',
    });
    expect([taken.status, taken.body['error']]).toEqual([409, 'email_taken']);
    const invited = await alice.client.call('POST', '/api/team/invitations', {
      email: 'bob@example.com',
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email: 'bob@example.com', role: 'member' });
    const code = invited.body['code'] as string;
    expect(Buffer.from(code, 'base64url')).toHaveLength(24); // 192 bits
    expect((await browser().call('GET', `/api/auth/invitations/${code}`)).body).toMatchObject({
      status: 'valid',
      email: 'bob@example.com',
      team: { role: 'member' },
    });

    clock.advance(60_000);
    // Bob joins Alice's account: no new billing account, a managed key of his own on it.
    const accountsBefore = await fetch(`${billing.apiUrl}/admin/accounts?limit=100`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    }).then(async (answer) => ((await answer.json()) as { items: unknown[] }).items.length);
    const bob = await signUp('bob@example.com', code);
    expect(bob.answer.status).toBe(201);
    expect(bob.user).toMatchObject({ account_id: accountId, account_role: 'member' });
    const accountsAfter = await fetch(`${billing.apiUrl}/admin/accounts?limit=100`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    }).then(async (answer) => ((await answer.json()) as { items: unknown[] }).items.length);
    expect(accountsAfter).toBe(accountsBefore);
    const bobKey = await keyIdOf('bob@example.com');
    expect(bobKey).not.toBe(await keyIdOf('alice@example.com'));
    expect(await activeKeyIds(accountId)).toEqual(
      expect.arrayContaining([bobKey, await keyIdOf('alice@example.com')]),
    );
    const aliceAccount = await alice.client.call('GET', '/api/relay/billing/account');
    const bobAccount = await bob.client.call('GET', '/api/relay/billing/account');
    expect(bobAccount.status).toBe(200);
    expect(bobAccount.body).toMatchObject({ id: accountId, balance: { pending_top_up_cu: 4_321 } });
    expect(bobAccount.body['balance']).toEqual(aliceAccount.body['balance']);
    // Used once.
    expect((await signUp('bob@example.com', code)).answer.status).toBe(403);

    // The team as each sees it: a member reads it and manages nothing.
    const team = await bob.client.call('GET', '/api/team');
    expect(team.status).toBe(200);
    expect(team.body['your_role']).toBe('member');
    const members = team.body['members'] as Array<Record<string, unknown>>;
    expect(members.map((m) => [m['email'], m['role']])).toEqual([
      ['alice@example.com', 'owner'],
      ['bob@example.com', 'member'],
    ]);
    const aliceId = members[0]!['id'] as string;
    const bobId = members[1]!['id'] as string;
    for (const [method, url, body] of [
      ['POST', '/api/team/invitations', { email: 'eve@example.com' }],
      ['DELETE', `/api/team/members/${aliceId}`, undefined],
      ['DELETE', `/api/team/invitations/${forDave.body['id'] as string}`, undefined],
    ] as const) {
      const refused = await bob.client.call(method, url, body);
      expect([refused.status, refused.body['error']]).toEqual([403, 'owner_required']);
    }

    // The link of an email that has a user of its own: refused in words, nothing joined.
    const daveJoin = await signUp('dave@example.com', forDave.body['code'] as string);
    expect([daveJoin.answer.status, daveJoin.answer.body['error']]).toEqual([409, 'email_taken']);
    expect(daveJoin.answer.body['message']).toMatch(/belongs to one account/);

    // A pending invitation is listed (newest first) and revoked; its link no longer works.
    clock.advance(60_000);
    const forErin = await alice.client.call('POST', '/api/team/invitations', {
      email: 'erin@example.com',
      role: 'owner',
    });
    const listed = (await alice.client.call('GET', '/api/team')).body['invitations'] as Array<
      Record<string, unknown>
    >;
    // Dave's was set aside when dave signed up on his own (QA QQ): no longer pending.
    expect(listed.map((i) => [i['email'], i['role']])).toEqual([['erin@example.com', 'owner']]);
    // Another account's ids answer 404, like unknown ones.
    for (const url of [
      `/api/team/members/${bobId}`,
      `/api/team/invitations/${forErin.body['id'] as string}`,
    ]) {
      const other = await carol.client.call('DELETE', url);
      expect([other.status, other.body['error']]).toEqual([
        404,
        url.includes('members') ? 'member_not_found' : 'invitation_not_found',
      ]);
    }
    expect(
      (await alice.client.call('DELETE', `/api/team/invitations/${forErin.body['id'] as string}`))
        .status,
    ).toBe(204);
    // Kept, set aside as revoked, as the operator's: a repeat says so, the row (the history)
    // stays, and its link says it was revoked, on load and at sign-up.
    const repeat = await alice.client.call(
      'DELETE',
      `/api/team/invitations/${forErin.body['id'] as string}`,
    );
    expect([repeat.status, repeat.body['error']]).toEqual([409, 'already_revoked']);
    expect(
      await rows.query(
        `SELECT email, account_id, void_reason FROM dashboard.invitations WHERE id = $1`,
        [forErin.body['id']],
      ),
    ).toEqual([{ email: 'erin@example.com', account_id: accountId, void_reason: 'revoked' }]);
    const erinLink = await browser().call(
      'GET',
      `/api/auth/invitations/${forErin.body['code'] as string}`,
    );
    // A team's link says so in every state (its page then names the team's owner to ask).
    expect(erinLink.body).toEqual({
      status: 'void',
      reason: 'revoked',
      expires_at: forErin.body['expires_at'],
      team: { role: 'owner' },
    });
    const erin = await signUp('erin@example.com', forErin.body['code'] as string);
    expect([erin.answer.status, erin.answer.body['error']]).toEqual([403, 'invitation_revoked']);
    expect(erin.answer.body['message']).toMatch(/revoked by an owner of the team/);

    // Removal: Bob's key revoked in billing, his session ended, his row gone.
    expect((await alice.client.call('DELETE', `/api/team/members/${bobId}`)).status).toBe(200);
    expect(await activeKeyIds(accountId)).not.toContain(bobKey);
    expect((await bob.client.call('GET', '/api/auth/session')).body['signed_in']).toBe(false);
    expect((await bob.client.call('GET', '/api/relay/billing/account')).status).toBe(401);
    const signIn = await browser().call('POST', '/api/auth/sign-in', {
      email: 'bob@example.com',
      password,
    });
    expect(signIn.status).toBe(401);
    expect((await alice.client.call('DELETE', `/api/team/members/${bobId}`)).status).toBe(404);

    // The last owner cannot leave; the account keeps working.
    const last = await alice.client.call('DELETE', `/api/team/members/${aliceId}`);
    expect([last.status, last.body['error']]).toEqual([409, 'last_owner']);
    expect((await alice.client.call('GET', '/api/relay/billing/account')).status).toBe(200);
  });

  it('an owner promotes and demotes, never the last owner; a member leaves (key revoked, signed out); the last owner cannot leave', async () => {
    await operatorWithSignUps('open');
    const frank = await signUp('frank@example.com');
    expect(frank.answer.status).toBe(201);
    const accountId = frank.user!['account_id']!;
    const ivan = await signUp('ivan@example.com');
    expect(ivan.answer.status).toBe(201);
    const join = async (email: string) => {
      const invited = await frank.client.call('POST', '/api/team/invitations', { email });
      expect(invited.status).toBe(201);
      const joined = await signUp(email, invited.body['code'] as string);
      expect(joined.answer.status).toBe(201);
      expect(joined.user).toMatchObject({ account_id: accountId, account_role: 'member' });
      return joined;
    };
    const grace = await join('grace@example.com');
    const heidi = await join('heidi@example.com');
    const idOf = (user: typeof frank) => user.user!['id']!;
    const roleOf = async (user: typeof frank) =>
      (await user.client.call('GET', '/api/team')).body['your_role'];

    // CSRF as every change, a valid body, owners only, this account's members only.
    const member = `/api/team/members/${idOf(grace)}`;
    expect(
      (await frank.client.call('PATCH', member, { role: 'owner' }, { csrf: false })).status,
    ).toBe(403);
    for (const body of [{ role: 'admin' }, {}, { role: 'owner', extra: 1 }]) {
      const malformed = await frank.client.call('PATCH', member, body);
      expect([malformed.status, malformed.body['error']]).toEqual([400, 'malformed_body']);
    }
    const byMember = await heidi.client.call('PATCH', member, { role: 'owner' });
    expect([byMember.status, byMember.body['error']]).toEqual([403, 'owner_required']);
    const byOther = await ivan.client.call('PATCH', member, { role: 'owner' });
    expect([byOther.status, byOther.body['error']]).toEqual([404, 'member_not_found']);
    const unknown = await frank.client.call('PATCH', '/api/team/members/usr_unknown', {
      role: 'owner',
    });
    expect([unknown.status, unknown.body['error']]).toEqual([404, 'member_not_found']);
    expect(await roleOf(grace)).toBe('member');

    // The only owner cannot demote themselves.
    const alone = await frank.client.call('PATCH', `/api/team/members/${idOf(frank)}`, {
      role: 'member',
    });
    expect([alone.status, alone.body['error']]).toEqual([409, 'last_owner']);
    expect(await roleOf(frank)).toBe('owner');

    // Promoted, Grace is an owner at once and demotes the former owner, who then manages nothing.
    const promoted = await frank.client.call('PATCH', member, { role: 'owner' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ id: idOf(grace), role: 'owner', you: false });
    expect(await roleOf(grace)).toBe('owner');
    const session = await grace.client.call('GET', '/api/auth/session');
    expect((session.body['user'] as Record<string, unknown>)['account_role']).toBe('owner');
    const demoted = await grace.client.call('PATCH', `/api/team/members/${idOf(frank)}`, {
      role: 'member',
    });
    expect(demoted.status).toBe(200);
    expect(demoted.body).toMatchObject({ id: idOf(frank), role: 'member' });
    const refused = await frank.client.call('PATCH', member, { role: 'member' });
    expect([refused.status, refused.body['error']]).toEqual([403, 'owner_required']);
    // The same role again changes nothing; demoting the last owner is 409.
    expect((await grace.client.call('PATCH', member, { role: 'owner' })).status).toBe(200);
    const last = await grace.client.call('PATCH', member, { role: 'member' });
    expect([last.status, last.body['error']]).toEqual([409, 'last_owner']);
    expect(await roleOf(grace)).toBe('owner');

    // Two owners demoting each other at once: the row locks let one through; the other is no
    // longer an owner by the time it holds them.
    expect(
      (await grace.client.call('PATCH', `/api/team/members/${idOf(frank)}`, { role: 'owner' }))
        .status,
    ).toBe(200);
    const both = await Promise.all([
      frank.client.call('PATCH', member, { role: 'member' }),
      grace.client.call('PATCH', `/api/team/members/${idOf(frank)}`, { role: 'member' }),
    ]);
    expect(both.map((answer) => [answer.status, answer.body['error']]).sort()).toEqual([
      [200, undefined],
      [403, 'owner_required'],
    ]);
    const team = (await heidi.client.call('GET', '/api/team')).body['members'] as Array<
      Record<string, unknown>
    >;
    expect(team.filter((m) => m['role'] === 'owner')).toHaveLength(1);
    const [owner, former] = (await roleOf(frank)) === 'owner' ? [frank, grace] : [grace, frank];

    // A member leaves: CSRF as every change; their key revoked in billing, their sessions ended.
    const leave = '/api/team/leave';
    expect((await heidi.client.call('POST', leave, undefined, { csrf: false })).status).toBe(403);
    const heidiKey = await keyIdOf('heidi@example.com');
    expect(await activeKeyIds(accountId)).toContain(heidiKey);
    const heidiCookie = heidi.client.cookie;
    const left = await heidi.client.call('POST', leave);
    expect(left.status).toBe(204);
    expect(String(left.headers['set-cookie'])).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    expect(await activeKeyIds(accountId)).not.toContain(heidiKey);
    heidi.client.cookie = heidiCookie; // the old cookie: its session is gone, not just cleared
    expect((await heidi.client.call('GET', '/api/auth/session')).body['signed_in']).toBe(false);
    expect((await heidi.client.call('GET', '/api/relay/billing/account')).status).toBe(401);
    expect(
      (
        await browser().call('POST', '/api/auth/sign-in', {
          email: 'heidi@example.com',
          password,
        })
      ).status,
    ).toBe(401);
    expect(
      ((await owner.client.call('GET', '/api/team')).body['members'] as unknown[]).length,
    ).toBe(2);

    // The last owner cannot leave; once the other has left, nor can they; the account works.
    const formerKey = await keyIdOf(former.user!['email']!);
    const stays = await owner.client.call('POST', leave);
    expect([stays.status, stays.body['error']]).toEqual([409, 'last_owner']);
    expect((await former.client.call('POST', leave)).status).toBe(204);
    const still = await owner.client.call('POST', leave);
    expect([still.status, still.body['error']]).toEqual([409, 'last_owner']);
    expect((await owner.client.call('GET', '/api/relay/billing/account')).status).toBe(200);
    const active = await activeKeyIds(accountId);
    expect(active).toContain(await keyIdOf(owner.user!['email']!));
    expect(active).not.toContain(formerKey);
  });

  it('removing a member revokes the API keys they made on the page, and those made with them, and lists the access tokens they made or rolled to roll; the list says who made each key (QA: access kept after removal)', async () => {
    await operatorWithSignUps('open');
    const olga = await signUp('olga@example.com');
    expect(olga.answer.status).toBe(201);
    const accountId = olga.user!['account_id']!;
    const invited = await olga.client.call('POST', '/api/team/invitations', {
      email: 'carla@example.com',
    });
    const carla = await signUp('carla@example.com', invited.body['code'] as string);
    expect(carla.user).toMatchObject({ account_id: accountId, account_role: 'member' });
    const carlaId = carla.user!['id']!;

    const make = async (user: typeof olga, name: string) => {
      const made = await user.client.call('POST', '/api/api-keys', {
        name,
        scopes: ['account', 'webhooks', 'audit'],
      });
      expect(made.status).toBe(201);
      return made.body as { id: string; key: string; created_by_email: string };
    };
    const carlasKey = await make(carla, 'carla ci');
    const olgasKey = await make(olga, 'olga ci');
    expect([carlasKey.created_by_email, olgasKey.created_by_email]).toEqual([
      'carla@example.com',
      'olga@example.com',
    ]);
    // Carla's key makes one more straight through billing: it is hers too.
    const minted = await fetch(`${billing.apiUrl}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${carlasKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'side door', scopes: ['account'] }),
    }).then(async (answer) => ({
      status: answer.status,
      body: (await answer.json()) as { id: string; key: string },
    }));
    expect(minted.status).toBe(201);

    const listed = await olga.client.call('GET', '/api/api-keys');
    const madeBy = Object.fromEntries(
      (listed.body['items'] as Array<{ id: string; created_by_email: string | null }>).map(
        (key) => [key.id, key.created_by_email],
      ),
    );
    expect(madeBy).toEqual({
      [carlasKey.id]: 'carla@example.com',
      [olgasKey.id]: 'olga@example.com',
      [minted.body.id]: 'carla@example.com',
    });

    // Access tokens are the account's: Carla rolls Olga's, makes one, deletes it, makes another.
    const relay = (user: typeof olga, method: string, path: string, body?: unknown) =>
      user.client.call(method, `/api/relay/billing${path}`, body);
    const olgasToken = await relay(olga, 'POST', '/access-tokens', { network: 'eth-mainnet' });
    expect(olgasToken.status).toBe(201);
    clock.advance(60_000);
    const rolled = await relay(
      carla,
      'POST',
      `/access-tokens/${olgasToken.body['id'] as string}/roll`,
    );
    expect(rolled.status).toBe(200);
    clock.advance(60_000);
    const dropped = await relay(carla, 'POST', '/access-tokens', { network: 'polygon-mainnet' });
    expect(
      (await relay(carla, 'DELETE', `/access-tokens/${dropped.body['id'] as string}`)).status,
    ).toBe(204);
    clock.advance(60_000);
    const carlasToken = await relay(carla, 'POST', '/access-tokens', { network: 'eth-mainnet' });
    expect(carlasToken.status).toBe(201);

    const accountWith = (key: string) =>
      fetch(`${billing.apiUrl}/account`, { headers: { authorization: `Bearer ${key}` } }).then(
        (answer) => answer.status,
      );
    expect(await accountWith(carlasKey.key)).toBe(200);
    const removed = await olga.client.call('DELETE', `/api/team/members/${carlaId}`);
    expect(removed.status).toBe(200);
    expect([...(removed.body['revoked_api_keys'] as string[])].sort()).toEqual(
      [carlasKey.id, minted.body.id].sort(),
    );
    // The tokens she made or rolled and that still work, newest first, for Olga to roll: not
    // rolled for her (production apps use them), the deleted one left out.
    expect(removed.body['access_tokens_to_roll']).toEqual([
      {
        id: carlasToken.body['id'],
        name: carlasToken.body['name'],
        network: 'eth-mainnet',
        hint: carlasToken.body['hint'],
        change: 'created',
        at: expect.any(String),
      },
      {
        id: rolled.body['id'],
        name: rolled.body['name'],
        network: 'eth-mainnet',
        hint: rolled.body['hint'],
        change: 'rolled',
        at: expect.any(String),
      },
    ]);
    const tokens = await relay(olga, 'GET', '/access-tokens');
    expect((tokens.body['items'] as Array<{ id: string }>).map((token) => token.id).sort()).toEqual(
      [carlasToken.body['id'], rolled.body['id']].sort(),
    );
    expect((await carla.client.call('GET', '/api/team')).status).toBe(401);
    expect(await accountWith(carlasKey.key)).toBe(401);
    expect(await accountWith(minted.body.key)).toBe(401);
    expect(await accountWith(olgasKey.key)).toBe(200);
    const after = await olga.client.call('GET', '/api/api-keys');
    expect((after.body['items'] as Array<{ id: string }>).map((key) => key.id)).toEqual([
      olgasKey.id,
    ]);
  });

  it('only an owner changes the plan through the relay (403 owner_required for a member, plan kept); a member still tops up (QA: any member changed the plan)', async () => {
    await operatorWithSignUps('open');
    const paula = await signUp('paula@example.com');
    expect(paula.answer.status).toBe(201);
    const invited = await paula.client.call('POST', '/api/team/invitations', {
      email: 'quinn@example.com',
    });
    const quinn = await signUp('quinn@example.com', invited.body['code'] as string);
    expect(quinn.user).toMatchObject({ account_role: 'member' });

    const byMember = await quinn.client.call('PUT', '/api/relay/billing/account/plan', {
      plan: 'starter',
    });
    expect([byMember.status, byMember.body['error']]).toEqual([403, 'owner_required']);
    expect((await quinn.client.call('GET', '/api/relay/billing/account')).body['plan']).toBe(
      'free',
    );
    // ADR 0604: members top up.
    expect(
      (await quinn.client.call('POST', '/api/relay/billing/top-ups', { cu: 1000 })).status,
    ).toBe(201);

    const byOwner = await paula.client.call('PUT', '/api/relay/billing/account/plan', {
      plan: 'starter',
    });
    expect([byOwner.status, byOwner.body['plan']]).toEqual([200, 'starter']);
  });

  it("a member makes no key with the plan scope (403 owner_required before billing is asked); the owner's does and changes the plan through billing's REST API; the member's account key cannot (ADR 0604: plan changes are the owner's)", async () => {
    await operatorWithSignUps('open');
    const uma = await signUp('uma@example.com');
    const accountId = uma.user!['account_id']!;
    const invited = await uma.client.call('POST', '/api/team/invitations', {
      email: 'vic@example.com',
    });
    const vic = await signUp('vic@example.com', invited.body['code'] as string);
    expect(vic.user).toMatchObject({ account_id: accountId, account_role: 'member' });
    const billingPlan = (key: string, plan: string) =>
      fetch(`${billing.apiUrl}/account/plan`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan }),
      }).then(async (answer) => ({
        status: answer.status,
        body: (await answer.json()) as Record<string, unknown>,
      }));

    const keysBefore = await activeKeyIds(accountId);
    const refused = await vic.client.call('POST', '/api/api-keys', {
      name: 'vic plan',
      scopes: ['account', 'plan'],
    });
    expect([refused.status, refused.body['error']]).toEqual([403, 'owner_required']);
    expect(refused.body['message']).toBe(
      "only an owner of the account changes its plan; ask one of the account's owners",
    );
    // Named under the form's Scopes, not only in its notice.
    expect(refused.body['fields']).toEqual({
      scopes: 'only an owner of the account may give a key the Plan scope; uncheck Plan',
    });
    expect(await activeKeyIds(accountId)).toEqual(keysBefore);

    // The member's account key, made after the change: no plan scope, so no plan change.
    const vics = await vic.client.call('POST', '/api/api-keys', {
      name: 'vic ci',
      scopes: ['account', 'webhooks'],
    });
    expect([vics.status, vics.body['scopes']]).toEqual([201, ['account', 'webhooks']]);
    const byMember = await billingPlan(vics.body['key'] as string, 'premium');
    expect([byMember.status, byMember.body['error']]).toEqual([403, 'insufficient_scope']);
    expect((await uma.client.call('GET', '/api/relay/billing/account')).body['plan']).toBe('free');

    const umas = await uma.client.call('POST', '/api/api-keys', {
      name: 'uma billing',
      scopes: ['account', 'plan'],
    });
    expect([umas.status, umas.body['scopes'], umas.body['created_by_email']]).toEqual([
      201,
      ['account', 'plan'],
      'uma@example.com',
    ]);
    const byOwner = await billingPlan(umas.body['key'] as string, 'starter');
    expect([byOwner.status, byOwner.body['plan']]).toEqual([200, 'starter']);
    // The dashboard's own (managed) keys hold every scope: the owner's Plan page still works.
    const onPage = await uma.client.call('PUT', '/api/relay/billing/account/plan', {
      plan: 'growth',
    });
    expect([onPage.status, onPage.body['plan']]).toEqual([200, 'growth']);
  });

  it("lists who bought each top-up: a member's through the relay is theirs (whatever the page sends), the operator's none; a removed member's stays labelled without their email (ADR 0604)", async () => {
    const operator = await operatorWithSignUps('open');
    const rhea = await signUp('rhea@example.com');
    const accountId = rhea.user!['account_id']!;
    const invited = await rhea.client.call('POST', '/api/team/invitations', {
      email: 'sam@example.com',
    });
    const sam = await signUp('sam@example.com', invited.body['code'] as string);
    const samId = sam.user!['id']!;

    // The page cannot name someone else: the BFF sets the buyer to the session's user.
    const bought = await sam.client.call('POST', '/api/relay/billing/top-ups', {
      cu: 2_000,
      created_by: rhea.user!['id'],
    });
    expect([bought.status, bought.body['created_by']]).toEqual([201, samId]);
    expect(
      (await operator.call('POST', `/api/operator/accounts/${accountId}/top-ups`, { cu: 5_000 }))
        .status,
    ).toBe(201);

    const listed = async () =>
      (await rhea.client.call('GET', '/api/relay/billing/top-ups')).body['items'] as Array<
        Record<string, unknown>
      >;
    expect(
      (await listed()).map((item) => [item['cu'], item['source'], item['created_by_email']]),
    ).toEqual([
      [5_000, 'operator', undefined],
      [2_000, 'account', 'sam@example.com'],
    ]);

    // The operator's account page lists the same buyers (ADR 0604 amendment, "Bought by").
    const onOperatorPage = async () =>
      (
        (await operator.call('GET', `/api/operator/accounts/${accountId}`)).body['top_ups'] as {
          items: Array<Record<string, unknown>>;
        }
      ).items.map((item) => [item['cu'], item['source'], item['created_by_email']]);
    expect(await onOperatorPage()).toEqual([
      [5_000, 'operator', undefined],
      [2_000, 'account', 'sam@example.com'],
    ]);

    expect((await rhea.client.call('DELETE', `/api/team/members/${samId}`)).status).toBe(200);
    expect(
      (await listed()).map((item) => [item['cu'], item['created_by'], item['created_by_email']]),
    ).toEqual([
      [5_000, null, undefined],
      [2_000, samId, null],
    ]);
    expect(await onOperatorPage()).toEqual([
      [5_000, 'operator', undefined],
      [2_000, 'account', null],
    ]);
  });
});
