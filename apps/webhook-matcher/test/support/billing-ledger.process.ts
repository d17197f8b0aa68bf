import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@meridian/testing';

const ROOT = join(__dirname, '../../../..');
const OPERATOR_TOKEN = 'webhook-matcher-test-operator-token';

export interface BillingAccount {
  readonly accountId: string;
  /** API key with every scope (account, audit, webhooks). */
  readonly key: string;
}

export interface RunningBillingLedger {
  readonly grpcTarget: string;
  readonly baseUrl: string;
  createAccount(body: {
    plan?: string | null;
    type?: 'individual' | 'team';
    node_owner?: boolean;
    contract?: Record<string, number>;
  }): Promise<BillingAccount>;
  createKey(accountKey: string, scopes: string[]): Promise<string>;
  /** Operator plan change: billing publishes plan.changed and balance.changed. */
  setPlan(accountId: string, plan: string | null, contract?: Record<string, number>): Promise<void>;
  topUp(accountKey: string, cu: number): Promise<void>;
  /**
   * Moves billing's clock forward and waits for one ledger pass (top-ups due have cleared,
   * allowances due are reset). Needs `TEST_CLOCK_CONTROL=true` in the billing env.
   */
  advanceClock(ms: number): Promise<Date>;
  stop(): Promise<void>;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

/**
 * The real billing-ledger as a child process (never imported: apps share contracts, not code),
 * with its own database, on the test's NATS prefix so its plan and balance events reach the
 * matcher under test. Accounts, keys, plans and top-ups go through its operator and account APIs.
 */
export async function startBillingLedger(
  natsPrefix: string,
  env: Record<string, string> = {},
): Promise<RunningBillingLedger> {
  const db: TestDatabase = await createTestDatabase({ prefix: 'wh_billing' });
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const fullEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    HTTP_PORT: String(httpPort),
    HTTP_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    OPERATOR_TOKEN,
    NATS_PREFIX: natsPrefix,
    LEDGER_TICK_MS: '200',
    LOG_LEVEL: 'error',
    ...env,
  };
  await run(['apps/billing-ledger/src/migrate.ts'], fullEnv);
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/billing-ledger/src/main.ts'],
    { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const base = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`billing-ledger exited: ${stderr}`);
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`billing-ledger did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const call = async (
    method: string,
    path: string,
    bearer: string,
    body: unknown,
    expected: number,
  ) => {
    const response = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== expected)
      throw new Error(
        `billing-ledger ${method} ${path}: ${response.status} ${await response.text()}`,
      );
    return (await response.json()) as Record<string, unknown>;
  };
  let n = 0;
  return {
    grpcTarget: `127.0.0.1:${grpcPort}`,
    baseUrl: base,
    async createAccount(body) {
      n += 1;
      const created = (await call(
        'POST',
        '/api/v1/admin/accounts',
        OPERATOR_TOKEN,
        { name: `wh-${n}`, ...body },
        201,
      )) as {
        account: { id: string };
        api_key: { key: string };
      };
      return { accountId: created.account.id, key: created.api_key.key };
    },
    async createKey(accountKey, scopes) {
      const created = (await call(
        'POST',
        '/api/v1/api-keys',
        accountKey,
        { name: `k-${scopes.join('-')}`, scopes },
        201,
      )) as {
        key: string;
      };
      return created.key;
    },
    async setPlan(accountId, plan, contract) {
      await call(
        'PUT',
        `/api/v1/admin/accounts/${accountId}/plan`,
        OPERATOR_TOKEN,
        { plan, ...(contract ? { contract } : {}) },
        200,
      );
    },
    async topUp(accountKey, cu) {
      await call('POST', '/api/v1/top-ups', accountKey, { cu }, 201);
    },
    async advanceClock(ms) {
      const moved = (await call(
        'POST',
        '/api/v1/admin/clock/advance',
        OPERATOR_TOKEN,
        { ms },
        200,
      )) as {
        now: string;
      };
      return new Date(moved.now);
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => {
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve(undefined);
          }, 5000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve(undefined);
          });
        });
      }
      await db.drop();
    },
  };
}
