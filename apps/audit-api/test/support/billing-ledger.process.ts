import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@meridian/testing';

const ROOT = join(__dirname, '../../../..');
const OPERATOR_TOKEN = 'audit-api-test-operator-token';

export interface BillingAccount {
  readonly accountId: string;
  /** API key with every scope (account, audit, webhooks). */
  readonly key: string;
}

export interface RunningBillingLedger {
  readonly grpcTarget: string;
  createAccount(plan: string): Promise<BillingAccount>;
  createKey(accountKey: string, scopes: string[]): Promise<string>;
  /** A new key of the account, with its id (to delete it). */
  createKeyWithId(accountKey: string, scopes: string[]): Promise<{ id: string; key: string }>;
  /** `DELETE /api/v1/api-keys/:id`: billing publishes the key's revocation. */
  deleteKey(accountKey: string, keyId: string): Promise<void>;
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
 * with its own test database; accounts and keys are made through its operator and account APIs.
 * `natsPrefix`: a provisioned namespace shared with the app under test (its revocation feed);
 * by default one of its own.
 */
export async function startBillingLedger(natsPrefix?: string): Promise<RunningBillingLedger> {
  const db: TestDatabase = await createTestDatabase({ prefix: 'audit_billing' });
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    HTTP_PORT: String(httpPort),
    HTTP_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    OPERATOR_TOKEN,
    NATS_PREFIX: natsPrefix ?? `audit_bl_${process.pid}_${Date.now().toString(36)}`,
    LEDGER_TICK_MS: '0',
    LOG_LEVEL: 'error',
  };
  await run(['apps/billing-ledger/src/migrate.ts'], env);
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/billing-ledger/src/main.ts'],
    { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const base = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 45_000;
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
  const post = async (path: string, bearer: string, body: unknown) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 201)
      throw new Error(`billing-ledger ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  return {
    grpcTarget: `127.0.0.1:${grpcPort}`,
    async createAccount(plan) {
      const created = (await post('/api/v1/admin/accounts', OPERATOR_TOKEN, {
        name: `audit-${plan}`,
        type: 'individual',
        plan,
      })) as {
        account: { id: string };
        api_key: { key: string };
      };
      return { accountId: created.account.id, key: created.api_key.key };
    },
    async createKey(accountKey, scopes) {
      const created = (await post('/api/v1/api-keys', accountKey, {
        name: `scopes-${scopes.join('-')}`,
        scopes,
      })) as { key: string };
      return created.key;
    },
    async createKeyWithId(accountKey, scopes) {
      return (await post('/api/v1/api-keys', accountKey, {
        name: `scopes-${scopes.join('-')}`,
        scopes,
      })) as { id: string; key: string };
    },
    async deleteKey(accountKey, keyId) {
      const response = await fetch(`${base}/api/v1/api-keys/${keyId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${accountKey}` },
      });
      if (response.status !== 204)
        throw new Error(`billing-ledger DELETE key: ${response.status} ${await response.text()}`);
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
