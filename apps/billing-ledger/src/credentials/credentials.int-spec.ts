import {
  billingV1,
  KvBuckets,
  revokedCredentialKey,
  type CredentialRevoked,
  type PlanChanged,
} from '@meridian/contracts';
import { createGrpcClient, type GrpcClient } from '@meridian/platform-grpc';
import { jetstreamManager } from '@nats-io/jetstream';
import { BillingGrpcServer } from '../grpc/billing.grpc';
import {
  api,
  BillingHarness,
  eventually,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import type { z } from 'zod';
import { adminApiKeysPage } from '../accounts/admin.schemas';
import { hashSecret } from './secrets';

type Billing = GrpcClient<(typeof billingV1.BillingService)['method']>;

describe('billing-ledger credentials, REST edges and gRPC (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;
  let grpc: Billing;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
    grpc = createGrpcClient(
      billingV1.BillingService,
      `127.0.0.1:${billing.app.get(BillingGrpcServer).port}`,
      { defaultTimeoutMs: 5_000 },
    );
  });
  afterAll(async () => {
    grpc?.close();
    await h.teardown();
  });

  async function newAccount(body: Record<string, unknown> = { name: 'creds', plan: 'free' }) {
    const created = await api<{
      account: { id: string };
      api_key: { key: string; id: string; scopes: string[] };
    }>(billing.url, 'POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, body);
    expect(created.status).toBe(201);
    return {
      id: created.body.account.id,
      key: created.body.api_key.key,
      keyId: created.body.api_key.id,
      scopes: created.body.api_key.scopes,
    };
  }

  async function lastMessage<T>(subject: string): Promise<T | undefined> {
    const jsm = await jetstreamManager(h.nc);
    const message = await jsm.streams
      .getMessage(`${h.prefix}_BILLING`, { last_by_subj: `${h.prefix}.${subject}` })
      .catch(() => undefined);
    return message?.json<T>();
  }

  it('stores API keys only as sha256 hashes and shows the secret once', async () => {
    const { id, key } = await newAccount();
    const created = await api<{ id: string; key: string; scopes: string[] }>(
      billing.url,
      'POST',
      '/api/v1/api-keys',
      key,
      { name: 'ci', scopes: ['audit'] },
    );
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^mrd_[A-Za-z0-9_-]{43}$/);

    const listed = await api<{ items: Array<Record<string, unknown>> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      key,
    );
    expect(listed.body.items).toHaveLength(2);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

    const rows: Array<Record<string, unknown>> = await h.dataSource.query(
      'SELECT * FROM billing.api_keys WHERE account_id = $1',
      [id],
    );
    expect(rows.map((r) => String(r['key_hash']).trim()).sort()).toEqual(
      [hashSecret(key), hashSecret(created.body.key)].sort(),
    );
    // Nowhere in the schema does either plain secret appear.
    for (const table of [
      'accounts',
      'api_keys',
      'access_tokens',
      'journals',
      'outbox',
      'balances',
    ]) {
      const dump = JSON.stringify(await h.dataSource.query(`SELECT * FROM billing.${table}`));
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(created.body.key);
    }

    const resolved = await grpc.resolveApiKey({ key: created.body.key });
    expect(resolved).toMatchObject({
      found: true,
      accountId: id,
      scopes: ['audit'],
      planId: 'free',
    });

    // An audit-only key can't use the account API; a revoked key resolves to nothing.
    expect((await api(billing.url, 'GET', '/api/v1/account', created.body.key)).status).toBe(403);
    expect(
      (await api(billing.url, 'DELETE', `/api/v1/api-keys/${created.body.id}`, key)).status,
    ).toBe(204);
    expect((await grpc.resolveApiKey({ key: created.body.key })).found).toBe(false);
    const revoked = await eventually(
      () =>
        h.kvJson<CredentialRevoked>(
          KvBuckets.revokedCredentials.name,
          revokedCredentialKey('api_key', hashSecret(created.body.key)),
        ),
      5_000,
      'revoked key in KV',
    );
    expect(revoked).toMatchObject({
      credentialId: created.body.id,
      reason: 'revoked',
      accountId: id,
    });
  });

  it('a rolled access token stops resolving at once and its revocation reaches KV from the roll itself', async () => {
    const { id, key } = await newAccount();
    const created = await api<{ id: string; token: string; network: string }>(
      billing.url,
      'POST',
      '/api/v1/access-tokens',
      key,
      { network: 'polygon-mainnet' },
    );
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^[0-9a-f]{40}$/);
    expect(await grpc.resolveAccessToken({ token: created.body.token })).toMatchObject({
      found: true,
      accountId: id,
      networkKey: 'polygon-mainnet',
      tokenId: created.body.id,
      account: {
        planId: 'free',
        balance: { status: billingV1.BalanceStatus.OK, allowanceCu: 50_000n },
      },
    });

    const rolled = await api<{ id: string; token: string; network: string }>(
      billing.url,
      'POST',
      `/api/v1/access-tokens/${created.body.id}/roll`,
      key,
    );
    expect(rolled.status).toBe(200);
    expect(rolled.body.network).toBe('polygon-mainnet');
    expect(await grpc.resolveAccessToken({ token: created.body.token })).toMatchObject({
      found: false,
      accountId: '',
    });
    expect(await grpc.resolveAccessToken({ token: rolled.body.token })).toMatchObject({
      found: true,
      tokenId: rolled.body.id,
    });

    // No clock here (a bound in ms is a flake on a loaded CI): the harness turns the periodic
    // tick off (LEDGER_TICK_MS 0), so only the outbox relay that follows the roll's commit can
    // put the revocation; `eventually` only waits for it.
    const revoked = await eventually(
      () =>
        h.kvJson<CredentialRevoked>(
          KvBuckets.revokedCredentials.name,
          revokedCredentialKey('access_token', hashSecret(created.body.token)),
        ),
      10_000,
      'revoked token in KV',
    );
    expect(revoked).toMatchObject({
      reason: 'rolled',
      network: 'polygon-mainnet',
      credentialId: created.body.id,
    });
    expect(
      await lastMessage<CredentialRevoked>(`billing.credential.revoked.v1.${id}`),
    ).toMatchObject({ credentialId: created.body.id });

    // Old id is gone; delete of the new one works; then it no longer resolves.
    expect(
      (await api(billing.url, 'POST', `/api/v1/access-tokens/${created.body.id}/roll`, key)).status,
    ).toBe(404);
    expect(
      (await api(billing.url, 'DELETE', `/api/v1/access-tokens/${rolled.body.id}`, key)).status,
    ).toBe(204);
    expect((await grpc.resolveAccessToken({ token: rolled.body.token })).found).toBe(false);
  });

  it('rolls and deletes with content-type: application/json and an empty body, as common HTTP clients send them', async () => {
    const { key } = await newAccount();
    const created = await api<{ id: string; token: string }>(
      billing.url,
      'POST',
      '/api/v1/access-tokens',
      key,
      { network: 'eth-mainnet' },
    );
    expect(created.status).toBe(201);
    const json = { 'content-type': 'application/json' };
    const rolled = await api<{ id: string; token: string; network: string }>(
      billing.url,
      'POST',
      `/api/v1/access-tokens/${created.body.id}/roll`,
      key,
      undefined,
      json,
    );
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({ network: 'eth-mainnet', token: expect.any(String) });
    expect(rolled.body.token).not.toBe(created.body.token);
    const deleted = await api(
      billing.url,
      'DELETE',
      `/api/v1/access-tokens/${rolled.body.id}`,
      key,
      undefined,
      json,
    );
    expect(deleted.status).toBe(204);
  });

  it('caps access tokens by plan and lifts the cap on upgrade, publishing the plan change with old and new plan', async () => {
    const { id, key } = await newAccount();
    for (const network of ['eth-mainnet', 'eth-sepolia']) {
      expect(
        (await api(billing.url, 'POST', '/api/v1/access-tokens', key, { network })).status,
      ).toBe(201);
    }
    const third = await api<{ error: string; request_id: string }>(
      billing.url,
      'POST',
      '/api/v1/access-tokens',
      key,
      { network: 'sui-mainnet' },
    );
    expect(third.status).toBe(409);
    expect(third.body).toMatchObject({
      error: 'cap_access_tokens_exceeded',
      request_id: expect.any(String),
    });

    const upgraded = await api<{ plan: string; caps: { access_tokens: number } }>(
      billing.url,
      'PUT',
      '/api/v1/account/plan',
      key,
      { plan: 'starter' },
    );
    expect(upgraded.status).toBe(200);
    expect(upgraded.body).toMatchObject({ plan: 'starter', caps: { access_tokens: 30 } });
    expect(
      (await api(billing.url, 'POST', '/api/v1/access-tokens', key, { network: 'sui-mainnet' }))
        .status,
    ).toBe(201);

    const event = await eventually(
      () => lastMessage<PlanChanged>(`billing.plan.changed.v1.${id}`),
      5_000,
      'plan changed event',
    );
    expect(event).toMatchObject({
      accountId: id,
      oldPlanId: 'free',
      newPlanId: 'starter',
      caps: { accessTokens: 30 },
    });
    const state = await grpc.getAccountState({ accountId: id });
    expect(state.account).toMatchObject({
      planId: 'starter',
      balance: { allowanceCu: 90_000_000n },
    });
    // Not our id shape (a NUL byte failed the query as INTERNAL): NOT_FOUND like an unknown id.
    for (const accountId of ['\u0000', 'acc_x', `${id}'--`, 'acc_000000000000000000000000'])
      await expect(grpc.getAccountState({ accountId })).rejects.toMatchObject({
        code: 'not_found', // gRPC NOT_FOUND, as the client reads it
      });
  });

  it('answers the REST edges with stable error codes: strict bodies, auth, operator token, unknown ids', async () => {
    const { key } = await newAccount();
    const cases: Array<[string, string, string | undefined, unknown, number, string]> = [
      ['POST', '/api/v1/api-keys', key, { scopes: ['audit'], admin: true }, 400, 'malformed_body'],
      [
        'POST',
        '/api/v1/access-tokens',
        key,
        { network: 'eth-mainnet', extra: 1 },
        400,
        'malformed_body',
      ],
      ['POST', '/api/v1/access-tokens', key, { network: 'bitcoin' }, 400, 'malformed_body'],
      ['POST', '/api/v1/top-ups', key, { cu: -5 }, 400, 'malformed_body'],
      ['PUT', '/api/v1/account/plan', key, { plan: 'enterprise' }, 403, 'contract_required'],
      ['GET', '/api/v1/account', undefined, undefined, 401, 'unauthorized'],
      ['GET', '/api/v1/account', 'mrd_not-a-key', undefined, 401, 'unauthorized'],
      ['POST', '/api/v1/admin/accounts', key, { name: 'x' }, 401, 'unauthorized'],
      [
        'POST',
        '/api/v1/admin/accounts',
        OPERATOR_TOKEN,
        { name: 'x', type: 'individual', plan: null },
        400,
        'malformed_body',
      ],
      ['DELETE', '/api/v1/access-tokens/tok_unknown', key, undefined, 404, 'not_found'],
      [
        'PUT',
        '/api/v1/admin/accounts/acc_unknown/plan',
        OPERATOR_TOKEN,
        { plan: 'pro' },
        404,
        'not_found',
      ],
      ['GET', '/api/v1/account/usage?group_by=week', key, undefined, 400, 'invalid_query'],
    ];
    for (const [method, path, token, body, status, code] of cases) {
      const response = await api<{ error: string; request_id: string }>(
        billing.url,
        method,
        path,
        token,
        body,
      );
      expect({ method, path, status: response.status, error: response.body?.error }).toEqual({
        method,
        path,
        status,
        error: code,
      });
      expect(response.body.request_id).toEqual(expect.any(String));
    }
  });

  it('never lists a managed key (the dashboard one) nor deletes it through the account API; the operator revokes it (QA: lock-out)', async () => {
    const managed = await newAccount({ name: 'dash@example.com', api_key_managed: true });
    const other = await api<{ id: string; key: string }>(
      billing.url,
      'POST',
      '/api/v1/api-keys',
      managed.key,
      { name: 'mine', scopes: ['account'] },
    );
    expect(other.status).toBe(201);
    for (const key of [managed.key, other.body.key]) {
      const listed = await api<{ items: Array<{ id: string }> }>(
        billing.url,
        'GET',
        '/api/v1/api-keys',
        key,
      );
      expect(listed.body.items.map((item) => item.id)).toEqual([other.body.id]);
      const refused = await api<{ error: string }>(
        billing.url,
        'DELETE',
        `/api/v1/api-keys/${managed.keyId}`,
        key,
      );
      expect([refused.status, refused.body.error]).toEqual([403, 'managed_key']);
    }
    const still = await api(billing.url, 'GET', '/api/v1/account', managed.key);
    expect(still.status).toBe(200);
    // The account's own keys are still the account's to delete.
    const own = await api(billing.url, 'DELETE', `/api/v1/api-keys/${other.body.id}`, managed.key);
    expect(own.status).toBe(204);
    // An operator's first key (not managed) is listed and deletable as before.
    const plain = await newAccount({ name: 'plain', plan: 'free' });
    const plainList = await api<{ items: Array<{ id: string }> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      plain.key,
    );
    expect(plainList.body.items.map((item) => item.id)).toEqual([plain.keyId]);

    // The operator revokes it: another account's key id is not found, then the key stops.
    const wrongAccount = await api<{ error: string }>(
      billing.url,
      'DELETE',
      `/api/v1/admin/accounts/${plain.id}/api-keys/${managed.keyId}`,
      OPERATOR_TOKEN,
    );
    expect([wrongAccount.status, wrongAccount.body.error]).toEqual([404, 'not_found']);
    const revoked = await api(
      billing.url,
      'DELETE',
      `/api/v1/admin/accounts/${managed.id}/api-keys/${managed.keyId}`,
      OPERATOR_TOKEN,
    );
    expect(revoked.status).toBe(204);
    const gone = await api<{ error: string }>(billing.url, 'GET', '/api/v1/account', managed.key);
    expect([gone.status, gone.body.error]).toEqual([401, 'unauthorized']);
    // Its revocation reaches every cache like any other (after the account's own key's).
    const event = await eventually(
      async () => {
        const last = await lastMessage<CredentialRevoked>(
          `billing.credential.revoked.v1.${managed.id}`,
        );
        return last?.credentialId === managed.keyId ? last : undefined;
      },
      5_000,
      'credential revoked event',
    );
    expect(event).toMatchObject({ credentialType: 'api_key', reason: 'revoked' });
  });

  it('lists every key of an account to the operator, managed and revoked ones marked, so a leaked one can be found and revoked (QA: ids only in Postgres)', async () => {
    const account = await newAccount({ name: 'listed@example.com', api_key_managed: true });
    const other = await newAccount({ name: 'not-listed', plan: 'free' });
    const own = await api<{ id: string; key: string }>(
      billing.url,
      'POST',
      '/api/v1/api-keys',
      account.key,
      { name: 'ci', scopes: ['audit'] },
    );
    const leaked = await api<{ id: string }>(billing.url, 'POST', '/api/v1/api-keys', account.key, {
      name: 'leaked',
      scopes: ['webhooks'],
    });
    expect([own.status, leaked.status]).toEqual([201, 201]);
    const gone = await api(
      billing.url,
      'DELETE',
      `/api/v1/admin/accounts/${account.id}/api-keys/${leaked.body.id}`,
      OPERATOR_TOKEN,
    );
    expect(gone.status).toBe(204);
    const list = (query = '', token = OPERATOR_TOKEN, id = account.id) =>
      api<z.output<typeof adminApiKeysPage> & { error: string; request_id: string }>(
        billing.url,
        'GET',
        `/api/v1/admin/accounts/${id}/api-keys${query}`,
        token,
      );

    // Every key by default, newest first, in the page schema the route declares (strict: no
    // secret, no hash); the dashboard's key marked managed, the revoked one with its time.
    const all = await list();
    expect(all.status).toBe(200);
    expect(adminApiKeysPage.parse(all.body)).toEqual(all.body);
    expect(all.body.items).toEqual([
      expect.objectContaining({ id: leaked.body.id, name: 'leaked', managed: false }),
      expect.objectContaining({ id: own.body.id, name: 'ci', managed: false, revoked_at: null }),
      expect.objectContaining({
        id: account.keyId,
        name: 'initial',
        scopes: ['account', 'audit', 'plan', 'webhooks'],
        managed: true,
        revoked_at: null,
      }),
    ]);
    expect(all.body.items[0]!.revoked_at).toEqual(expect.any(String));
    expect(all.body.next_cursor).toBeNull();
    expect(JSON.stringify(all.body)).not.toContain(hashSecret(account.key).trim());
    // The account's own list is unchanged: its active, unmanaged keys only.
    const accountList = await api<{ items: Array<{ id: string }> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      account.key,
    );
    expect(accountList.body.items.map((k) => k.id)).toEqual([own.body.id]);

    const ids = async (query: string) => (await list(query)).body.items.map((k) => k.id);
    expect(await ids('?state=active')).toEqual([own.body.id, account.keyId]);
    expect(await ids('?state=revoked')).toEqual([leaked.body.id]);
    // The account API's keyset pages.
    const first = await list('?limit=2');
    expect(first.body.items.map((k) => k.id)).toEqual([leaked.body.id, own.body.id]);
    expect(await ids(`?limit=2&cursor=${first.body.next_cursor}`)).toEqual([account.keyId]);
    expect(await ids('')).not.toContain(other.keyId);

    // Found by the list, the dashboard's key is revoked like any other.
    const revoked = await api(
      billing.url,
      'DELETE',
      `/api/v1/admin/accounts/${account.id}/api-keys/${account.keyId}`,
      OPERATOR_TOKEN,
    );
    expect(revoked.status).toBe(204);
    expect((await api(billing.url, 'GET', '/api/v1/account', account.key)).status).toBe(401);
    expect(await ids('?state=active')).toEqual([own.body.id]);

    // Errors in the house form.
    const cases: Array<[string, string, string, number, string]> = [
      [account.id, '?state=leaked', OPERATOR_TOKEN, 400, 'invalid_query'],
      [account.id, '?limit=0', OPERATOR_TOKEN, 400, 'invalid_query'],
      [account.id, '?cursor=key_1', OPERATOR_TOKEN, 400, 'invalid_query'],
      [account.id, '?managed=true', OPERATOR_TOKEN, 400, 'invalid_query'],
      ['acc_000000000000000000000000', '', OPERATOR_TOKEN, 404, 'not_found'],
      ['not-an-id', '', OPERATOR_TOKEN, 404, 'not_found'],
      [account.id, '', own.body.key, 401, 'unauthorized'],
      [account.id, '', '', 401, 'unauthorized'],
    ];
    for (const [id, query, token, status, code] of cases) {
      const answer = await list(query, token, id);
      expect({ id, query, status: answer.status, error: answer.body.error }).toEqual({
        id,
        query,
        status,
        error: code,
      });
      expect(answer.body.request_id).toEqual(expect.any(String));
    }
  });

  it('lets the operator make a new key for an account, a managed one to replace a revoked dashboard key (ADR 0110 amendment)', async () => {
    const account = await newAccount({ name: 'renewed@example.com', api_key_managed: true });
    const make = (id: string, body: unknown, token = OPERATOR_TOKEN) =>
      api<{
        id: string;
        name: string;
        scopes: string[];
        hint: string;
        created_at: string;
        key: string;
        error: string;
        request_id: string;
      }>(billing.url, 'POST', `/api/v1/admin/accounts/${id}/api-keys`, token, body);
    const revoked = await api(
      billing.url,
      'DELETE',
      `/api/v1/admin/accounts/${account.id}/api-keys/${account.keyId}`,
      OPERATOR_TOKEN,
    );
    expect(revoked.status).toBe(204);

    // A managed key with every scope by default, its secret shown once; the old key stays dead.
    const renewed = await make(account.id, { name: 'dashboard', managed: true });
    expect(renewed.status).toBe(201);
    expect(renewed.body).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{24}$/),
      name: 'dashboard',
      scopes: ['account', 'audit', 'plan', 'webhooks'],
      hint: expect.any(String),
      created_at: expect.any(String),
      created_by: null,
      key: expect.stringMatching(/^mrd_/),
    });
    const own = await api<{ id: string }>(billing.url, 'GET', '/api/v1/account', renewed.body.key);
    expect([own.status, own.body.id]).toEqual([200, account.id]);
    const old = await api<{ error: string }>(billing.url, 'GET', '/api/v1/account', account.key);
    expect([old.status, old.body.error]).toEqual([401, 'unauthorized']);
    // Managed: never listed to the account, not the account's to delete.
    const listed = await api<{ items: unknown[] }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      renewed.body.key,
    );
    expect(listed.body.items).toEqual([]);
    const refused = await api<{ error: string }>(
      billing.url,
      'DELETE',
      `/api/v1/api-keys/${renewed.body.id}`,
      renewed.body.key,
    );
    expect([refused.status, refused.body.error]).toEqual([403, 'managed_key']);

    // Not managed, with the scopes named: an ordinary key of the account, listed and deletable.
    const plain = await make(account.id, { scopes: ['audit', 'audit'] });
    expect([plain.status, plain.body.name, plain.body.scopes]).toEqual([201, 'api key', ['audit']]);
    const listedAgain = await api<{ items: Array<{ id: string }> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      renewed.body.key,
    );
    expect(listedAgain.body.items.map((item) => item.id)).toEqual([plain.body.id]);

    // Errors in the house form, and none of them makes a key.
    const cases: Array<[string, unknown, string, number, string]> = [
      ['acc_000000000000000000000000', { managed: true }, OPERATOR_TOKEN, 404, 'not_found'],
      ['not-an-id', {}, OPERATOR_TOKEN, 404, 'not_found'],
      [account.id, { scopes: [] }, OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, { scopes: ['admin'] }, OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, { managed: 'yes' }, OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, { name: '' }, OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, { managed: true, owner: 'x' }, OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, [], OPERATOR_TOKEN, 400, 'malformed_body'],
      [account.id, { managed: true }, renewed.body.key, 401, 'unauthorized'],
      [account.id, { managed: true }, '', 401, 'unauthorized'], // no Authorization header
    ];
    for (const [id, body, token, status, code] of cases) {
      const answer = await make(id, body, token);
      expect({ id, body, status: answer.status, error: answer.body.error }).toEqual({
        id,
        body,
        status,
        error: code,
      });
      expect(answer.body.request_id).toEqual(expect.any(String));
    }
    const keys = (await h.dataSource.query(
      'SELECT count(*)::int AS n FROM billing.api_keys WHERE account_id = $1',
      [account.id],
    )) as Array<{ n: number }>;
    expect(keys[0]!.n).toBe(3);
  });

  it("flags keys made before the managed flag as managed on the operator's word (the dashboard names its own)", async () => {
    const before = await newAccount({ name: 'old-dash@example.com', plan: 'free' });
    const mark = (ids: string[]) =>
      api<{ flagged: number; error?: string }>(
        billing.url,
        'POST',
        '/api/v1/admin/accounts/managed-keys',
        OPERATOR_TOKEN,
        { api_key_ids: ids },
      );
    const first = await mark([before.keyId, 'key_000000000000000000000000']);
    expect([first.status, first.body.flagged]).toEqual([200, 1]);
    expect((await mark([before.keyId])).body.flagged).toBe(0);
    const listed = await api<{ items: unknown[] }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      before.key,
    );
    expect(listed.body.items).toEqual([]);
    const refused = await api<{ error: string }>(
      billing.url,
      'DELETE',
      `/api/v1/api-keys/${before.keyId}`,
      before.key,
    );
    expect([refused.status, refused.body.error]).toEqual([403, 'managed_key']);
    const bad = await mark(['acc_000000000000000000000000']);
    expect([bad.status, bad.body.error]).toEqual([400, 'malformed_body']);
  });

  it('refuses to leave an individual account without a plan as account creation does (QA: 200 with plan null)', async () => {
    const refused = await api<{ error: string; message: string }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'x', type: 'individual', plan: null },
    );
    const individual = await newAccount({ name: 'individual', plan: 'starter' });
    const put = await api<{ error: string; message: string }>(
      billing.url,
      'PUT',
      `/api/v1/admin/accounts/${individual.id}/plan`,
      OPERATOR_TOKEN,
      { plan: null },
    );
    expect([put.status, put.body.error, put.body.message]).toEqual([
      400,
      'malformed_body',
      'body.plan: an individual account needs a plan',
    ]);
    expect([refused.status, refused.body.error, refused.body.message]).toEqual([
      put.status,
      put.body.error,
      put.body.message,
    ]);
    const account = await api<{ plan: string | null }>(
      billing.url,
      'GET',
      `/api/v1/admin/accounts/${individual.id}`,
      OPERATOR_TOKEN,
    );
    expect(account.body.plan).toBe('starter');
    // A team may go without one.
    const team = await newAccount({ name: 'team', type: 'team', plan: 'pro' });
    const cleared = await api<{ plan: string | null; plan_required: boolean }>(
      billing.url,
      'PUT',
      `/api/v1/admin/accounts/${team.id}/plan`,
      OPERATOR_TOKEN,
      { plan: null },
    );
    expect([cleared.status, cleared.body.plan, cleared.body.plan_required]).toEqual([
      200,
      null,
      true,
    ]);
  });

  it('creates a team account without a plan (plan_required) and lets the operator set an enterprise contract', async () => {
    const team = await newAccount({ name: 'team', type: 'team' });
    const account = await api<{
      plan: string | null;
      plan_required: boolean;
      caps: { webhooks: { active_webhooks: number } };
    }>(billing.url, 'GET', '/api/v1/account', team.key);
    expect(account.body).toMatchObject({
      plan: null,
      plan_required: true,
      caps: { webhooks: { active_webhooks: 0 } },
    });
    expect(team.scopes).toEqual(['account', 'audit', 'plan', 'webhooks']);

    const set = await api<{ plan: string; caps: { node_rps: number; allowance_cu: number } }>(
      billing.url,
      'PUT',
      `/api/v1/admin/accounts/${team.id}/plan`,
      OPERATOR_TOKEN,
      { plan: 'enterprise', contract: { allowance_cu: 5_000_000_000, node_rps: 2_000 } },
    );
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      plan: 'enterprise',
      caps: { node_rps: 2_000, allowance_cu: 5_000_000_000 },
    });
    const event = await eventually(
      () => lastMessage<PlanChanged>(`billing.plan.changed.v1.${team.id}`),
      5_000,
      'plan changed event',
    );
    expect(event).toMatchObject({
      oldPlanId: null,
      newPlanId: 'enterprise',
      caps: { nodeRps: 2_000 },
    });
  });

  it('a key makes keys only with scopes it holds itself: an account-only key gets 403 scope_not_held for webhooks and audit (QA: privilege escalation)', async () => {
    const account = await newAccount();
    const make = (key: string, body: unknown) =>
      api<{ key: string; scopes: string[]; created_by: string | null; error: string }>(
        billing.url,
        'POST',
        '/api/v1/api-keys',
        key,
        body,
      );
    const active = async () =>
      (
        await api<z.infer<typeof adminApiKeysPage>>(
          billing.url,
          'GET',
          `/api/v1/admin/accounts/${account.id}/api-keys?state=active`,
          OPERATOR_TOKEN,
        )
      ).body.items.length;
    const accountOnly = await make(account.key, { name: 'acct', scopes: ['account'] });
    expect([accountOnly.status, accountOnly.body.scopes]).toEqual([201, ['account']]);
    const before = await active();

    for (const scopes of [['webhooks', 'audit'], ['audit'], ['account', 'webhooks']]) {
      const refused = await make(accountOnly.body.key, { name: 'escalate', scopes });
      expect([refused.status, refused.body.error]).toEqual([403, 'scope_not_held']);
      // As the README and /openapi.json say (QA YY): beside error, not under details.
      expect(refused.body).toMatchObject({
        missing: scopes.filter((scope) => scope !== 'account'),
        held: ['account'],
      });
      expect(refused.body).not.toHaveProperty('details');
    }
    expect(await active()).toBe(before);
    // The same scopes, or fewer, stay the key's to make (a customer's rotation).
    const same = await make(accountOnly.body.key, { name: 'rotated', scopes: ['account'] });
    expect([same.status, same.body.scopes, same.body.created_by]).toEqual([201, ['account'], null]);
    const fewer = await make(account.key, { name: 'ci', scopes: ['audit'] });
    expect([fewer.status, fewer.body.scopes]).toEqual([201, ['audit']]);
    // Only the dashboard's managed key names a key's maker.
    const named = await make(account.key, { scopes: ['audit'], created_by: 'usr_x' });
    expect([named.status, named.body.error]).toEqual([403, 'created_by_not_allowed']);
  });

  it("labels a key with who made it, inherited by the keys it makes, and revokes one maker's keys at once (ADR 0604: a removed member)", async () => {
    const account = await newAccount({ name: 'team@example.com', api_key_managed: true });
    const make = (key: string, body: unknown) =>
      api<{ id: string; key: string; created_by: string | null; error: string }>(
        billing.url,
        'POST',
        '/api/v1/api-keys',
        key,
        body,
      );
    // The dashboard's managed key names the member it makes a key for.
    const carols = await make(account.key, { scopes: ['account', 'audit'], created_by: 'usr_c' });
    expect([carols.status, carols.body.created_by]).toEqual([201, 'usr_c']);
    const bobs = await make(account.key, { scopes: ['account'], created_by: 'usr_b' });
    // Carol's key makes one of its own: it inherits her label, it cannot shed it.
    const minted = await make(carols.body.key, { scopes: ['audit'] });
    expect([minted.status, minted.body.created_by]).toEqual([201, 'usr_c']);
    const listed = await api<{ items: Array<{ id: string; created_by: string | null }> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      account.key,
    );
    expect(
      Object.fromEntries(listed.body.items.map((key) => [key.id, key.created_by])),
    ).toMatchObject({
      [carols.body.id]: 'usr_c',
      [minted.body.id]: 'usr_c',
      [bobs.body.id]: 'usr_b',
    });

    const revoke = (createdBy: unknown, accountId = account.id) =>
      api<{ revoked: string[]; error: string }>(
        billing.url,
        'POST',
        `/api/v1/admin/accounts/${accountId}/api-keys/revoke-created-by`,
        OPERATOR_TOKEN,
        { created_by: createdBy },
      );
    const revoked = await revoke('usr_c');
    expect(revoked.status).toBe(200);
    expect([...revoked.body.revoked].sort()).toEqual([carols.body.id, minted.body.id].sort());
    for (const key of [carols.body.key, minted.body.key]) {
      const refused = await api<{ error: string }>(billing.url, 'GET', '/api/v1/account', key);
      expect([refused.status, refused.body.error]).toEqual([401, 'unauthorized']);
    }
    const kept = await api(billing.url, 'GET', '/api/v1/account', bobs.body.key);
    expect(kept.status).toBe(200);
    expect((await revoke('usr_c')).body.revoked).toEqual([]);
    expect((await revoke('')).body.error).toBe('malformed_body');
    expect((await revoke('usr_c', 'acc_000000000000000000000000')).status).toBe(404);
  });
});
