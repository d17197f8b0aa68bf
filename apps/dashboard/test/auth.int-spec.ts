import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { AuthService } from '../src/auth/auth.service';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import {
  OPERATOR_TOKEN,
  startBillingLedger,
  type RunningBillingLedger,
} from './support/billing-ledger.process';
import { bffEnv, startBff } from './support/bff-app';
import { BffClient as Client } from './support/bff-client';

describe('dashboard auth and BFF (real Postgres, real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let env: Record<string, string>;
  /** The dashboard's own database, to read what a user row holds. */
  let dashboardDb: DataSource;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');
  const password = 'correct horse battery staple';

  beforeAll(async () => {
    [billing, db] = await Promise.all([
      startBillingLedger(),
      createTestDatabase({ prefix: 'dashboard' }),
    ]);
    const dataSource = createAppDataSource(dataSourceOptions(db.url));
    await runMigrations(dataSource, SCHEMA);
    env = bffEnv({ databaseUrl: db.url, billingApiUrl: billing.apiUrl });
    app = await startBff(env, { clock });
    dashboardDb = app.get(DataSource);
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([billing?.stop(), db?.drop()]);
  });

  // Each sign-up from its own address, as different people's would be: sign-up is throttled per
  // address (tested on its own below).
  let addresses = 0;
  const signUp = async (email: string, extra: Record<string, unknown> = {}) => {
    addresses += 1;
    const client = new Client(app, `10.0.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`);
    return {
      client,
      answer: await client.call('POST', '/api/auth/sign-up', { email, password, ...extra }),
    };
  };

  it('signs up into a new billing account, with an httpOnly SameSite=Strict Secure session cookie', async () => {
    const { client, answer } = await signUp('Alice@Example.com');
    expect(answer.status).toBe(201);
    expect(answer.body['user']).toMatchObject({ email: 'alice@example.com', role: 'customer' });
    const cookie = String(answer.headers['set-cookie']);
    expect(cookie).toMatch(/^mrd_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Secure/);
    const account = await client.call('GET', '/api/relay/billing/account');
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({
      id: (answer.body['user'] as { account_id: string }).account_id,
      plan: 'free',
    });
    // The same email again, any case: refused on the field.
    const again = await signUp('ALICE@example.com');
    expect([again.answer.status, again.answer.body['error'], again.answer.body['fields']]).toEqual([
      409,
      'email_taken',
      { email: 'an account with this email exists; sign in instead' },
    ]);
  });

  it('refuses state-changing calls without the session CSRF token, and anything outside the relay allow-list', async () => {
    const { client } = await signUp('csrf@example.com');
    const without = await client.call(
      'POST',
      '/api/relay/billing/access-tokens',
      { network: 'eth-mainnet' },
      { csrf: false },
    );
    expect([without.status, without.body['error']]).toEqual([403, 'csrf_failed']);
    const forged = new Client(app);
    forged.cookie = client.cookie;
    forged.csrf = 'not-the-token';
    expect(
      (await forged.call('POST', '/api/relay/billing/access-tokens', { network: 'eth-mainnet' }))
        .status,
    ).toBe(403);
    const made = await client.call('POST', '/api/relay/billing/access-tokens', {
      network: 'eth-mainnet',
    });
    expect([made.status, made.body['network']]).toEqual([201, 'eth-mainnet']);
    expect((await client.call('GET', '/api/relay/billing/admin/accounts')).status).toBe(404);
    expect((await client.call('GET', '/api/relay/billing/access-tokens/..%2Fadmin')).status).toBe(
      404,
    );
    expect((await client.call('GET', '/api/operator/accounts')).status).toBe(403);
    expect((await new Client(app).call('GET', '/api/relay/billing/account')).status).toBe(401);
  });

  it('hides and protects the key the dashboard itself uses, and shows the keys the customer made', async () => {
    const { client, answer } = await signUp('keys@example.com');
    expect((await client.call('GET', '/api/api-keys')).body).toEqual({ items: [] });
    const made = await client.call('POST', '/api/api-keys', { name: 'audit', scopes: ['audit'] });
    expect(made.status).toBe(201);
    expect(String(made.body['key'])).toMatch(/^mrd_/);
    const list = await client.call('GET', '/api/api-keys');
    expect((list.body['items'] as Array<{ id: string }>).map((k) => k.id)).toEqual([
      made.body['id'],
    ]);
    void answer;
    const own = await client.call('GET', '/api/relay/billing/account');
    expect(own.status).toBe(200);
    expect((await client.call('DELETE', `/api/api-keys/${String(made.body['id'])}`)).status).toBe(
      204,
    );
    // Billing itself hides and keeps the dashboard's key from any key of the account (QA: a
    // customer deleted it through billing's API and was locked out of the dashboard).
    const account = await client.call('POST', '/api/api-keys', { scopes: ['account'] });
    const key = String(account.body['key']);
    const [{ api_key_id: dashboardKey }] = (await dashboardDb.query(
      'SELECT api_key_id FROM dashboard.users WHERE email = $1',
      ['keys@example.com'],
    )) as [{ api_key_id: string }];
    const billingCall = async (method: string, path: string) => {
      const response = await fetch(`${billing.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const listed = await billingCall('GET', '/api-keys');
    expect((listed.body['items'] as Array<{ id: string }>).map((k) => k.id)).toEqual([
      account.body['id'],
    ]);
    const refused = await billingCall('DELETE', `/api-keys/${dashboardKey}`);
    expect([refused.status, refused.body['error']]).toEqual([403, 'managed_key']);
    expect((await client.call('GET', '/api/relay/billing/account')).status).toBe(200);
  });

  it('flags the keys of users who signed up before the managed flag, so billing protects them too', async () => {
    // A user of an older release: its billing key was made without `api_key_managed`.
    const made = await fetch(`${billing.apiUrl}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'older@example.com', type: 'individual' }),
    });
    const created = (await made.json()) as {
      account: { id: string };
      api_key: { id: string; key: string };
    };
    await dashboardDb.query(
      `INSERT INTO dashboard.users (id, email, password_hash, role, account_id, account_role,
         api_key_id, sealed_api_key, created_at, password_changed_at)
       VALUES ('usr_older', 'older@example.com', 'x', 'customer', $1, 'owner', $2, 'sealed',
         now(), now())`,
      [created.account.id, created.api_key.id],
    );
    const deleteOwn = () =>
      fetch(`${billing.apiUrl}/api-keys/${created.api_key.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${created.api_key.key}` },
      });
    expect(await app.get(AuthService).flagManagedKeys()).toBe(1);
    expect(await app.get(AuthService).flagManagedKeys()).toBe(0);
    const refused = await deleteOwn();
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
      403,
      'managed_key',
    ]);
  });

  it('racing sign-ups with one email make one user and one billing account (QA: one each)', async () => {
    const email = 'race@example.com';
    const answers = await Promise.all([signUp(email), signUp(email), signUp(email)]);
    const statuses = answers.map(({ answer }) => answer.status).sort();
    expect(statuses).toEqual([201, 409, 409]);
    for (const { answer } of answers.filter(({ answer }) => answer.status === 409))
      expect(['email_taken', 'sign_up_in_progress']).toContain(answer.body['error']);
    const accounts = await fetch(`${billing.apiUrl}/admin/accounts?q=${email}`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    const items = ((await accounts.json()) as { items: Array<{ id: string; name: string }> }).items;
    const users = (await dashboardDb.query(
      'SELECT account_id FROM dashboard.users WHERE email = $1',
      [email],
    )) as Array<{ account_id: string }>;
    expect(users).toHaveLength(1);
    expect(items.map((item) => item.id)).toEqual([users[0]!.account_id]);
    // Once the first is done, the email is taken as before.
    const later = await signUp(email);
    expect([later.answer.status, later.answer.body['error']]).toEqual([409, 'email_taken']);
  });

  it('throttles failed sign-ins per email and address until the oldest failure leaves the window', async () => {
    await signUp('bob@example.com');
    const client = new Client(app);
    for (let i = 0; i < 5; i += 1) {
      const wrong = await client.call('POST', '/api/auth/sign-in', {
        email: 'bob@example.com',
        password: `wrong ${i}`,
      });
      expect([wrong.status, wrong.body['error']]).toEqual([401, 'invalid_credentials']);
      clock.advance(1_000);
    }
    const limited = await client.call('POST', '/api/auth/sign-in', {
      email: 'bob@example.com',
      password,
    });
    expect([limited.status, limited.body['error']]).toEqual([429, 'too_many_attempts']);
    expect(Number(limited.headers['retry-after'])).toBe(15 * 60 - 5);
    // An unknown email fails the same way (no hint that bob exists and nobody else does).
    const unknown = await client.call('POST', '/api/auth/sign-in', {
      email: 'nobody@example.com',
      password,
    });
    expect([unknown.status, unknown.body['error']]).toEqual([401, 'invalid_credentials']);
    clock.advance(15 * 60_000);
    const ok = await client.call('POST', '/api/auth/sign-in', {
      email: 'bob@example.com',
      password,
    });
    expect(ok.status).toBe(200);
    expect((await client.call('GET', '/api/auth/session')).body).toMatchObject({ signed_in: true });
  });

  it('ends the other sessions when the password changes, and sign-out ends this one', async () => {
    const { client: first } = await signUp('carol@example.com');
    const second = new Client(app);
    expect(
      (await second.call('POST', '/api/auth/sign-in', { email: 'carol@example.com', password }))
        .status,
    ).toBe(200);
    const wrong = await first.call('POST', '/api/auth/password', {
      current_password: 'nope',
      new_password: 'another good password',
    });
    expect([wrong.status, wrong.body['fields']]).toEqual([
      400,
      { current_password: 'the current password is wrong' },
    ]);
    const short = await first.call('POST', '/api/auth/password', {
      current_password: password,
      new_password: 'short',
    });
    expect([short.status, short.body['fields']]).toEqual([
      400,
      { new_password: 'use at least 10 characters' },
    ]);
    expect(
      (
        await first.call('POST', '/api/auth/password', {
          current_password: password,
          new_password: 'another good password',
        })
      ).status,
    ).toBe(204);
    expect((await second.call('GET', '/api/auth/session')).body).toMatchObject({
      signed_in: false,
    });
    expect((await first.call('GET', '/api/auth/session')).body).toMatchObject({ signed_in: true });
    expect((await first.call('POST', '/api/auth/sign-out')).status).toBe(204);
    expect((await first.call('GET', '/api/auth/session')).body).toMatchObject({ signed_in: false });
  });

  it('switches to invitation only: a code works once, for its email, until it expires', async () => {
    const operator = new Client(app);
    const signedIn = await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(signedIn.body['user']).toMatchObject({ role: 'operator' });
    expect(
      (await operator.call('PUT', '/api/operator/settings', { signup_mode: 'invite' })).status,
    ).toBe(200);
    const none = await signUp('dave@example.com');
    expect([none.answer.status, none.answer.body['error']]).toEqual([403, 'invitation_required']);
    const invitation = await operator.call('POST', '/api/operator/invitations', {
      email: 'dave@example.com',
    });
    expect(invitation.status).toBe(201);
    const code = String(invitation.body['code']);
    const otherEmail = await signUp('eve@example.com', { invitation: code });
    expect([otherEmail.answer.status, otherEmail.answer.body['error']]).toEqual([
      403,
      'invitation_invalid',
    ]);
    const dave = await signUp('dave@example.com', { invitation: code });
    expect([dave.answer.status, dave.answer.body['error']]).toEqual([201, undefined]);
    expect((await signUp('dave2@example.com', { invitation: code })).answer.status).toBe(403);
    const late = await operator.call('POST', '/api/operator/invitations', {
      email: 'frank@example.com',
    });
    clock.advance(8 * 24 * 3_600_000);
    const expired = await signUp('frank@example.com', { invitation: String(late.body['code']) });
    expect([expired.answer.status, expired.answer.body['error']]).toEqual([
      403,
      'invitation_invalid',
    ]);
    // The operator re-signs in (the week also ended the session) and opens sign-up again.
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(
      (await operator.call('PUT', '/api/operator/settings', { signup_mode: 'open' })).status,
    ).toBe(200);
  });

  it('invitation only: a link says on load what it is, refusals cost no sign-up attempt, an existing account is not invited', async () => {
    const operator = new Client(app);
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(
      (await operator.call('PUT', '/api/operator/settings', { signup_mode: 'invite' })).status,
    ).toBe(200);
    const guest = new Client(app, '203.0.113.90');
    const attempt = (email: string, invitation?: string) =>
      guest.call('POST', '/api/auth/sign-up', { email, password, invitation });
    // Beyond SIGNUP_MAX_PER_ADDRESS (5) refusals, none counted: no 429.
    const refused = [];
    for (let n = 1; n <= 6; n++)
      refused.push((await attempt(`closed${n}@example.com`)).body['error']);
    for (let n = 1; n <= 6; n++)
      refused.push((await attempt(`closed${n}@example.com`, `not-a-code-${n}`)).body['error']);
    expect(refused).toEqual([
      ...Array<string>(6).fill('invitation_required'),
      ...Array<string>(6).fill('invitation_invalid'),
    ]);
    // The operator cannot invite an email that has an account (dave signed up above).
    const taken = await operator.call('POST', '/api/operator/invitations', {
      email: 'Dave@example.com',
    });
    expect([taken.status, taken.body['error'], taken.body['fields']]).toEqual([
      409,
      'email_taken',
      { email: 'this email already has an account; they can sign in as they are' },
    ]);
    const invited = await operator.call('POST', '/api/operator/invitations', {
      email: 'ivy@example.com',
    });
    const code = String(invited.body['code']);
    const look = (c: string) => guest.call('GET', `/api/auth/invitations/${c}`);
    expect((await look(code)).body).toEqual({
      status: 'valid',
      email: 'ivy@example.com',
      expires_at: invited.body['expires_at'],
    });
    const unknown = await look('never-issued');
    expect([unknown.status, unknown.body['error']]).toEqual([404, 'invitation_unknown']);
    // After twelve refusals the address still signs up with its invitation.
    expect((await attempt('ivy@example.com', code)).status).toBe(201);
    expect((await look(code)).body).toEqual({
      status: 'used',
      expires_at: invited.body['expires_at'],
    });
    const late = await operator.call('POST', '/api/operator/invitations', {
      email: 'heidi@example.com',
    });
    clock.advance(8 * 24 * 3_600_000);
    expect((await look(String(late.body['code']))).body).toMatchObject({ status: 'expired' });
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    expect(
      (await operator.call('PUT', '/api/operator/settings', { signup_mode: 'open' })).status,
    ).toBe(200);
  });

  it('lets the operator open an account, change its plan and credit a top-up; a customer sees the plan', async () => {
    const { client, answer } = await signUp('grace@example.com');
    const accountId = (answer.body['user'] as { account_id: string }).account_id;
    const operator = new Client(app);
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    const found = await operator.call('GET', '/api/operator/accounts?q=GRACE');
    expect(found.body['items']).toEqual([
      expect.objectContaining({ account_id: accountId, email: 'grace@example.com' }),
    ]);
    const detail = await operator.call('GET', `/api/operator/accounts/${accountId}`);
    expect(detail.body).toMatchObject({
      email: 'grace@example.com',
      account: { plan: 'free' },
    });
    // Its webhooks have a route of their own (operator-webhooks.int-spec.ts).
    expect(detail.body).not.toHaveProperty('webhooks');
    const bad = await operator.call('PUT', `/api/operator/accounts/${accountId}/plan`, {
      plan: 'gold',
    });
    expect([bad.status, Object.keys(bad.body['fields'] as object)]).toEqual([400, ['plan']]);
    // Enterprise comes with a contract this route does not carry: refused, nothing changed.
    const enterprise = await operator.call('PUT', `/api/operator/accounts/${accountId}/plan`, {
      plan: 'enterprise',
    });
    expect([enterprise.status, enterprise.body['fields']]).toEqual([
      400,
      { plan: "enterprise is set with its contract through billing-ledger's operator API" },
    ]);
    expect(
      (await operator.call('PUT', `/api/operator/accounts/${accountId}/plan`, { plan: 'growth' }))
        .status,
    ).toBe(200);
    const credited = await operator.call('POST', `/api/operator/accounts/${accountId}/top-ups`, {
      cu: 5_000,
    });
    expect(credited.body).toMatchObject({ cu: 5_000, source: 'operator', status: 'pending' });
    // The page sends one Idempotency-Key per press; a retry of that request credits nothing more.
    const key = { 'idempotency-key': `press-${accountId}` };
    const first = await operator.call(
      'POST',
      `/api/operator/accounts/${accountId}/top-ups`,
      { cu: 700 },
      { headers: key },
    );
    const retried = await operator.call(
      'POST',
      `/api/operator/accounts/${accountId}/top-ups`,
      { cu: 700 },
      { headers: key },
    );
    expect([first.status, retried.status, retried.body['id']]).toEqual([
      201,
      201,
      first.body['id'],
    ]);
    const listed = await fetch(`${billing.apiUrl}/admin/accounts/${accountId}/top-ups`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    const topUps = ((await listed.json()) as { items: Array<{ cu: number }> }).items;
    expect(topUps.map((t) => t.cu).sort((a, b) => a - b)).toEqual([700, 5_000]);
    expect((await operator.call('GET', '/api/operator/accounts/acc_unknown')).status).toBe(404);
    const seen = await client.call('GET', '/api/relay/billing/account');
    expect(seen.body).toMatchObject({
      plan: 'growth',
      caps: { access_tokens: 45 },
      balance: { pending_top_up_cu: 5_700 }, // 5 000, then 700 once (the retry credited nothing)
    });
  });

  it('lets the operator find and open accounts made outside the dashboard (billing-ledger bulk)', async () => {
    const bulk = await fetch(`${billing.apiUrl}/admin/accounts/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        accounts: [{ name: 'Harbor Labs one' }, { name: 'Harbor Labs two', plan: 'starter' }],
      }),
    });
    expect(bulk.status).toBe(201);
    const made = ((await bulk.json()) as { items: Array<{ account: { id: string } }> }).items.map(
      (item) => item.account.id,
    );
    const operator = new Client(app);
    await operator.call('POST', '/api/auth/sign-in', {
      email: 'ops@example.com',
      password: 'operator password 1',
    });
    const found = await operator.call('GET', '/api/operator/accounts?q=harbor%20labs');
    expect(found.status).toBe(200);
    expect(found.body['items']).toEqual(
      [...made]
        .sort()
        .reverse()
        .map((id) =>
          expect.objectContaining({
            account_id: id,
            email: null,
            name: expect.stringMatching(/^Harbor Labs/),
          }),
        ),
    );
    // Every account is listed (no query), in pages the operator can follow.
    const all = await operator.call('GET', '/api/operator/accounts');
    expect((all.body['items'] as unknown[]).length).toBeGreaterThanOrEqual(4);
    const opened = await operator.call('GET', `/api/operator/accounts/${made[1]}`);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({
      email: null,
      account: { id: made[1], plan: 'starter' },
      usage: { group_by: 'day_network', items: [] },
      usage_by_method: { group_by: 'method', items: [] },
      top_ups: { items: [] },
    });
    expect(
      (await operator.call('PUT', `/api/operator/accounts/${made[1]}/plan`, { plan: 'growth' }))
        .status,
    ).toBe(200);
    const credited = await operator.call('POST', `/api/operator/accounts/${made[0]}/top-ups`, {
      cu: 1_000,
    });
    expect([credited.status, credited.body['source']]).toEqual([201, 'operator']);
    const bad = await operator.call('GET', '/api/operator/accounts?cursor=x&sort=name');
    expect([bad.status, bad.body['error']]).toEqual([400, 'invalid_query']);
  });

  it('behind an ingress (TRUST_PROXY=1) the throttles count the address it forwards, not its own', async () => {
    // As main.ts builds it: the setting parsed, then given to the HTTP edge.
    const proxied = await startBff({ ...env, TRUST_PROXY: '1' }, { clock });
    const viaIngress = (client: string, n: number) =>
      proxied.inject({
        method: 'POST',
        url: '/api/auth/sign-up',
        remoteAddress: '10.96.0.9', // the ingress controller, for every client
        headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
        payload: JSON.stringify({ email: `ingress-${client}-${n}@example.com`, password }),
      });
    try {
      // Six people behind one ingress: none is held back by the others' sign-ups.
      const others = [];
      for (let n = 1; n <= 6; n++) others.push((await viaIngress(`198.51.100.${n}`, n)).statusCode);
      expect(others).toEqual([201, 201, 201, 201, 201, 201]);
      // One client past its own limit is.
      const one = [];
      for (let n = 1; n <= 6; n++) one.push((await viaIngress('198.51.100.200', n)).statusCode);
      expect(one).toEqual([201, 201, 201, 201, 201, 429]);
    } finally {
      await proxied.close();
    }
  });

  it('sign-in locks are per (email, client address): failures from elsewhere lock nobody out (QA)', async () => {
    // Behind an ingress (TRUST_PROXY=1), as deploy/ runs it; an account ceiling of 10 here.
    const proxied = await startBff(
      { ...env, TRUST_PROXY: '1', LOGIN_MAX_FAILURES_PER_ACCOUNT: '10' },
      { clock },
    );
    const email = 'alice@corp.example';
    const signIn = async (from: string, secret: string, who = email) => {
      const answer = await proxied.inject({
        method: 'POST',
        url: '/api/auth/sign-in',
        remoteAddress: '10.96.0.9', // the ingress controller, for every client
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        payload: JSON.stringify({ email: who, password: secret }),
      });
      return { status: answer.statusCode, retryAfter: answer.headers['retry-after'] };
    };
    const clear = (body: unknown, token = OPERATOR_TOKEN) =>
      proxied.inject({
        method: 'POST',
        url: '/api/admin/sign-in-locks/clear',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        payload: JSON.stringify(body),
      });
    try {
      await signUp(email);
      // QA: five wrong passwords from five addresses locked her correct one out for 15 min.
      for (let n = 1; n <= 5; n++) expect((await signIn(`192.0.2.${n}`, 'wrong')).status).toBe(401);
      expect((await signIn('198.51.100.10', password)).status).toBe(200);

      // One address guessing her password is locked (the pair), and only it.
      for (let n = 1; n <= 5; n++) expect((await signIn('203.0.113.5', 'wrong')).status).toBe(401);
      const locked = await signIn('203.0.113.5', password);
      expect(locked).toEqual({ status: 429, retryAfter: String(15 * 60) });
      expect((await signIn('198.51.100.10', password)).status).toBe(200);

      // Ten failures from anywhere reach the account's ceiling: a new address waits, the one
      // she signed in from does not.
      expect((await signIn('203.0.113.6', password)).status).toBe(429);
      expect((await signIn('198.51.100.10', password)).status).toBe(200);

      // The operator ends the locks with the operator token (not a session: it may be theirs).
      expect((await clear({ email })).statusCode).toBe(200);
      expect((await clear({ email }, 'not-the-operator-token')).statusCode).toBe(401);
      expect((await clear({})).statusCode).toBe(400);
      // QA L8: an address that is none was answered 200 {"cleared":0}; refused as a bad field.
      const notAnAddress = await clear({ address: 'not-an-ip' });
      expect(notAnAddress.statusCode).toBe(400);
      expect(notAnAddress.json()).toMatchObject({
        error: 'malformed_body',
        fields: { address: expect.any(String) },
      });
      expect((await clear({ address: '2001:db8::1' })).json()).toEqual({ cleared: 0 });
      expect((await signIn('203.0.113.6', password)).status).toBe(200);
      expect((await signIn('203.0.113.5', password)).status).toBe(200);
      const cleared = await clear({ email: 'ALICE@corp.example' });
      expect(cleared.json()).toEqual({ cleared: 0 });
    } finally {
      await proxied.close();
    }
  });

  it("one address failing for many emails is limited, but not for an email it signed in to (QA: the operator's)", async () => {
    const operator = new Client(app, '192.0.2.50');
    const ops = { email: 'ops@example.com', password: 'operator password 1' };
    expect((await operator.call('POST', '/api/auth/sign-in', ops)).status).toBe(200);
    const someone = new Client(app, '192.0.2.50');
    for (let n = 0; n < 20; n++) {
      const wrong = await someone.call('POST', '/api/auth/sign-in', {
        email: `guess-${n}@example.com`,
        password: 'wrong',
      });
      expect(wrong.status).toBe(401);
    }
    const limited = await someone.call('POST', '/api/auth/sign-in', {
      email: 'guess-20@example.com',
      password: 'wrong',
    });
    expect([limited.status, limited.body['error']]).toEqual([429, 'too_many_attempts']);
    // The operator signed in from this address before: the others' failures do not hold it.
    expect((await operator.call('POST', '/api/auth/sign-in', ops)).status).toBe(200);
    // The address's lock, ended by the operator.
    const cleared = await app.inject({
      method: 'POST',
      url: '/api/admin/sign-in-locks/clear',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: JSON.stringify({ address: '192.0.2.50' }),
    });
    expect(cleared.json()).toEqual({ cleared: 20 * 2 }); // the address's rows and its pairs
    const again = await someone.call('POST', '/api/auth/sign-in', {
      email: 'guess-20@example.com',
      password: 'wrong',
    });
    expect(again.status).toBe(401);
  });

  it('throttles sign-ups per client address, a taken email counted too, until the oldest leaves the window', async () => {
    const from = () => new Client(app, '203.0.113.77');
    const attempt = (email: string) =>
      from().call('POST', '/api/auth/sign-up', { email, password });
    const statuses = [];
    for (const n of [1, 2, 3, 4]) statuses.push((await attempt(`burst${n}@example.com`)).status);
    // Telling a taken email is what the throttle slows down: the 409 counts as an attempt (an
    // email signed up elsewhere; this address's own sign-up sent again would be the same one).
    await new Client(app, '203.0.113.79').call('POST', '/api/auth/sign-up', {
      email: 'burst-taken@example.com',
      password,
    });
    statuses.push((await attempt('burst-taken@example.com')).status);
    expect(statuses).toEqual([201, 201, 201, 201, 409]);
    clock.advance(10 * 60_000);
    const refused = await attempt('burst5@example.com');
    expect(refused.status).toBe(429);
    expect(refused.body['error']).toBe('too_many_sign_ups');
    // The oldest of the five leaves the one-hour window in 50 min.
    expect(refused.headers['retry-after']).toBe(String(50 * 60));
    // Nothing was made for the refused one, and another address is not held back.
    expect(
      (
        await new Client(app, '203.0.113.78').call('POST', '/api/auth/sign-in', {
          email: 'burst5@example.com',
          password,
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await new Client(app, '203.0.113.78').call('POST', '/api/auth/sign-up', {
          email: 'elsewhere@example.com',
          password,
        })
      ).status,
    ).toBe(201);
    clock.advance(50 * 60_000);
    expect((await attempt('burst5@example.com')).status).toBe(201);
  });
});
