import { Writable } from 'node:stream';
import { billingV1, KvBuckets, revokedCredentialKey } from '@meridian/contracts';
import { createGrpcClient } from '@meridian/platform-grpc';
import { BillingGrpcServer } from '../grpc/billing.grpc';
import { api, BillingHarness, eventually, OPERATOR_TOKEN } from '../testing/billing-harness';
import { hashSecret } from './secrets';

/**
 * QA (disaster recovery): a Postgres restored from before a revocation held the credential
 * active again. The revocations in the billing-revoked-credentials KV bucket are applied again
 * when billing-ledger starts.
 */
describe('billing-ledger re-applies KV revocations at start (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  const lines: Array<{ level: number; msg: string; apiKeys?: string[]; accessTokens?: string[] }> =
    [];
  const logTo = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });

  beforeAll(() => h.setup());
  afterAll(() => h.teardown());

  it('refuses a key and a token revoked after the backup again once the app restarts, with one warn line naming them', async () => {
    const first = await h.start();
    const account = await api<{ account: { id: string }; api_key: { key: string } }>(
      first.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'restore', plan: 'free' },
    );
    expect(account.status).toBe(201);
    const owner = account.body.api_key.key;
    const leaked = await api<{ id: string; key: string }>(
      first.url,
      'POST',
      '/api/v1/api-keys',
      owner,
      { name: 'leaked', scopes: ['account'] },
    );
    expect(leaked.status).toBe(201);
    const token = await api<{ id: string; token: string }>(
      first.url,
      'POST',
      '/api/v1/access-tokens',
      owner,
      { network: 'polygon-mainnet' },
    );
    expect(token.status).toBe(201);

    expect(
      (await api(first.url, 'DELETE', `/api/v1/api-keys/${leaked.body.id}`, owner)).status,
    ).toBe(204);
    expect(
      (await api(first.url, 'DELETE', `/api/v1/access-tokens/${token.body.id}`, owner)).status,
    ).toBe(204);
    for (const key of [
      revokedCredentialKey('api_key', hashSecret(leaked.body.key)),
      revokedCredentialKey('access_token', hashSecret(token.body.token)),
    ])
      await eventually(
        () => h.kvJson(KvBuckets.revokedCredentials.name, key),
        5_000,
        `${key} in KV`,
      );
    await first.app.close();

    // The restore: the rows as the backup held them, active; the KV bucket kept.
    await h.dataSource.query('UPDATE billing.api_keys SET revoked_at = NULL WHERE id = $1', [
      leaked.body.id,
    ]);
    await h.dataSource.query(
      'UPDATE billing.access_tokens SET revoked_at = NULL, revoked_reason = NULL WHERE id = $1',
      [token.body.id],
    );

    const second = await h.start({ LOG_LEVEL: 'warn' }, { logTo });
    const grpc = createGrpcClient(
      billingV1.BillingService,
      `127.0.0.1:${second.app.get(BillingGrpcServer).port}`,
      { defaultTimeoutMs: 5_000 },
    );
    try {
      // Refused from the first request on: the replay runs before the app serves.
      expect((await api(second.url, 'GET', '/api/v1/account', leaked.body.key)).status).toBe(401);
      expect(await grpc.resolveAccessToken({ token: token.body.token })).toMatchObject({
        found: false,
      });
      expect(await grpc.resolveApiKey({ key: leaked.body.key })).toMatchObject({ found: false });
      // The account's own key was never revoked and still works.
      expect((await api(second.url, 'GET', '/api/v1/account', owner)).status).toBe(200);
    } finally {
      grpc.close();
    }
    const replayed = lines.filter((line) => /re-applied/.test(line.msg));
    expect(replayed).toEqual([
      expect.objectContaining({
        level: 40,
        apiKeys: [leaked.body.id],
        accessTokens: [token.body.id],
      }),
    ]);
    const rows = await h.dataSource.query(
      `SELECT (SELECT revoked_at IS NOT NULL FROM billing.api_keys WHERE id = $1) AS key,
              (SELECT revoked_at IS NOT NULL FROM billing.access_tokens WHERE id = $2) AS token`,
      [leaked.body.id, token.body.id],
    );
    expect(rows).toEqual([{ key: true, token: true }]);
  });
});
