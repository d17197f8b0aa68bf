import { randomBytes } from 'node:crypto';
import { DomainError } from '@meridian/errors';
import { parseConfig } from '@meridian/platform-config';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { Queryable, UserRow, UsersRepository } from '../auth/users.repository';
import { configSchema, type AppConfig } from '../config/config';
import { AccountSecrets } from '../secrets/account-secrets';
import type {
  Upstream,
  UpstreamAnswer,
  UpstreamCall,
  UpstreamClient,
} from '../upstream/upstream.client';
import { ManagedKeys } from '../upstream/managed-keys';
import { AccountKeyService } from './account-key.service';

const OPERATOR_TOKEN = 'an-operator-token-0123456789';
const config: AppConfig = parseConfig(configSchema, {
  DATABASE_URL: 'postgres://x@127.0.0.1/x',
  HTTP_PORT: '0',
  BILLING_API_URL: 'http://billing/api/v1',
  WEBHOOKS_API_URL: 'http://matcher/api/v1',
  AUDIT_API_URL: 'http://audit/v1',
  OPERATOR_TOKEN,
  DASHBOARD_SECRETS_KEY: randomBytes(32).toString('base64'),
});

interface Call {
  upstream: Upstream;
  method: string;
  path: string;
  bearer: string;
}

/**
 * The APIs as the key service sees them: billing takes the keys in `live` and makes a new one on
 * its operator route; `webhooks` answers `webhooksStatus` to any key.
 */
class FakeApis {
  readonly calls: Call[] = [];
  readonly live = new Set<string>();
  webhooksStatus = 200;
  accountCheckStatus?: number;
  private made = 0;

  client(): UpstreamClient {
    return {
      call: (u: Upstream, m: string, p: string, c: UpstreamCall) => this.call(u, m, p, c),
    } as unknown as UpstreamClient;
  }

  private async call(
    upstream: Upstream,
    method: string,
    path: string,
    call: UpstreamCall,
  ): Promise<UpstreamAnswer> {
    this.calls.push({ upstream, method, path, bearer: call.bearer });
    await new Promise((resolve) => setImmediate(resolve));
    if (upstream === 'webhooks') return { status: this.webhooksStatus, body: {} };
    if (method === 'POST' && path.startsWith('/admin/accounts/')) {
      this.made += 1;
      const key = `mrd_new_${this.made}`;
      this.live.add(key);
      return { status: 201, body: { id: `key_new_${this.made}`, key } };
    }
    if (path === '/account' && this.accountCheckStatus !== undefined)
      return { status: this.accountCheckStatus, body: {} };
    return this.live.has(call.bearer)
      ? { status: 200, body: { id: 'acc_1' } }
      : { status: 401, body: { error: 'unauthorized' } };
  }
}

/** One user row, its lock taken in turn as Postgres's row lock would be. */
class FakeUsers {
  row: UserRow;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(row: UserRow) {
    this.row = row;
  }

  repository(): UsersRepository {
    return {
      withUserLocked: <T>(_id: string, work: (db: Queryable, row: UserRow) => Promise<T>) => {
        const run = this.queue.then(() => work({} as Queryable, { ...this.row }));
        this.queue = run.catch(() => undefined);
        return run;
      },
      setApiKey: async (_db: Queryable, _id: string, apiKeyId: string, sealed: string) => {
        this.row = { ...this.row, apiKeyId, sealedApiKey: sealed };
      },
    } as unknown as UsersRepository;
  }
}

function setUp() {
  const registry = new Registry();
  const logger = pino({ level: 'silent' });
  const secrets = new AccountSecrets(config, logger, registry);
  const apis = new FakeApis();
  apis.live.add('mrd_first');
  const users = new FakeUsers({
    id: 'usr_1',
    email: 'a@example.com',
    passwordHash: 'x',
    role: 'customer',
    accountId: 'acc_1',
    accountRole: 'owner',
    apiKeyId: 'key_first',
    sealedApiKey: secrets.seal('mrd_first'),
    createdAt: new Date(0),
  });
  const client = apis.client();
  const service = new AccountKeyService(
    secrets,
    client,
    users.repository(),
    new ManagedKeys(config, client, logger),
    logger,
    registry,
  );
  const renewals = async () =>
    Object.fromEntries(
      (await registry.getSingleMetric('dashboard_account_key_renewals_total')!.get()).values.map(
        (v) => [v.labels['outcome'], v.value],
      ),
    );
  return { apis, users, service, renewals };
}

const made = (apis: FakeApis) =>
  apis.calls.filter((c) => c.method === 'POST' && c.path.startsWith('/admin/accounts/'));

describe('AccountKeyService', () => {
  it('calls with the stored key and renews nothing while the API takes it', async () => {
    const { apis, users, service } = setUp();
    const answer = await service.call(users.row, 'billing', 'GET', '/account');
    expect(answer.status).toBe(200);
    expect(apis.calls).toEqual([
      { upstream: 'billing', method: 'GET', path: '/account', bearer: 'mrd_first' },
    ]);
  });

  it('renews a revoked key once, with the operator token, and calls again with the new key', async () => {
    const { apis, users, service, renewals } = setUp();
    apis.live.delete('mrd_first');
    const answer = await service.call(users.row, 'billing', 'GET', '/account/balance');
    expect(answer.status).toBe(200);
    expect(made(apis)).toEqual([
      {
        upstream: 'billing',
        method: 'POST',
        path: '/admin/accounts/acc_1/api-keys',
        bearer: OPERATOR_TOKEN,
      },
    ]);
    expect(apis.calls.at(-1)).toMatchObject({ path: '/account/balance', bearer: 'mrd_new_1' });
    expect(users.row.apiKeyId).toBe('key_new_1');
    expect(await renewals()).toEqual({ renewed: 1 });
  });

  it('makes one key for concurrent refused calls of one user (one flight, then the stored key)', async () => {
    const { apis, users, service, renewals } = setUp();
    apis.live.delete('mrd_first');
    const stale = users.row;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => service.call(stale, 'billing', 'GET', '/account')),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // A request that read the user before the renewal and is refused after it.
    expect((await service.call(stale, 'billing', 'GET', '/account')).status).toBe(200);
    expect(made(apis)).toHaveLength(1);
    expect(await renewals()).toEqual({ renewed: 1, shared: 1 });
  });

  it('answers 503 account_key_rejected when the new key is refused too, and does not loop', async () => {
    const { apis, users, service, renewals } = setUp();
    apis.live.delete('mrd_first');
    apis.webhooksStatus = 401;
    await expect(service.call(users.row, 'webhooks', 'GET', '/webhooks')).rejects.toMatchObject(
      new DomainError('account_key_rejected', 'unavailable', "webhooks refused the account's key"),
    );
    expect(apis.calls.filter((c) => c.upstream === 'webhooks')).toHaveLength(2);
    expect(made(apis)).toHaveLength(1);
    expect(await renewals()).toEqual({ renewed: 1, rejected_again: 1 });
  });

  it("makes no key when billing still takes the stored one (another API's 401)", async () => {
    const { apis, users, service, renewals } = setUp();
    apis.webhooksStatus = 401;
    for (let i = 0; i < 2; i += 1)
      await expect(service.call(users.row, 'webhooks', 'GET', '/webhooks')).rejects.toMatchObject({
        code: 'account_key_rejected',
      });
    expect(made(apis)).toHaveLength(0);
    expect(users.row.apiKeyId).toBe('key_first');
    expect(await renewals()).toEqual({ not_revoked: 2 });
  });

  it('answers billing unavailable as it is when billing cannot say whether the key is revoked', async () => {
    const { apis, users, service } = setUp();
    apis.live.delete('mrd_first');
    apis.accountCheckStatus = 503;
    await expect(service.json(users.row, 'audit', 'GET', '/quota')).rejects.toMatchObject({
      kind: 'unavailable',
    });
    expect(made(apis)).toHaveLength(0);
  });
});
