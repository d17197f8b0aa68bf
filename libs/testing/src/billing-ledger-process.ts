import { runAppScript, startAppProcess, type AppEnv, type AppProcess } from './app-process';
import { freePort } from './free-port';
import { createTestDatabase, type TestDatabase } from './test-database';

/**
 * The real billing-ledger as a child process, for other apps' tests (apps share contracts, never
 * code): its database migrated, HTTP and gRPC on free ports of 127.0.0.1, accounts and keys made
 * through its operator and account REST APIs.
 */
export interface BillingLedgerProcessOptions {
  /** Its `OPERATOR_TOKEN`. */
  readonly operatorToken: string;
  /** Its `NATS_PREFIX` (a namespace shared with the app under test, or one of its own). */
  readonly natsPrefix: string;
  /**
   * A database of the caller's, migrated here and left to the caller; without it, a new test
   * database (named with `databasePrefix`) that `stop()` drops.
   */
  readonly databaseUrl?: string;
  readonly databasePrefix?: string;
  /** More settings (`NATS_URL`, `LOG_LEVEL`, `LEDGER_TICK_MS`, …), over the ones above. */
  readonly env?: AppEnv;
  /** See `startAppProcess` (default 60 s). */
  readonly startTimeoutMs?: number;
}

export interface BillingLedgerAccount {
  readonly accountId: string;
  /** The account's first API key (every scope). */
  readonly key: string;
}

export interface BillingLedgerProcess {
  /** `http://127.0.0.1:<port>` (the REST API is under `/api/v1`). */
  readonly url: string;
  /** `127.0.0.1:<port>` of its gRPC server (`BILLING_GRPC_URL`). */
  readonly grpcTarget: string;
  readonly process: AppProcess;
  /**
   * A REST call with a bearer credential (and a JSON body when given). Rejects with
   * `billing-ledger <method> <path>: <status> <body>` unless the status is `expected` (any
   * below 300 when not given); resolves to the JSON answer (`{}` when empty).
   */
  call(
    method: string,
    path: string,
    bearer: string,
    body?: unknown,
    expected?: number,
  ): Promise<Record<string, unknown>>;
  /** `POST /api/v1/admin/accounts` as the operator (201): `body` is `{name, type, plan, …}`. */
  createAccount(body: Record<string, unknown>): Promise<BillingLedgerAccount>;
  /** `POST /api/v1/api-keys` as the account (201): a new key and its id. */
  createKey(
    accountKey: string,
    name: string,
    scopes: string[],
  ): Promise<{ id: string; key: string }>;
  /** Stops the process (see `AppProcess.stop`), then drops the database it made, if any. */
  stop(): Promise<void>;
}

/** Migrates billing-ledger's database, starts `apps/billing-ledger/src/main.ts` and waits for /healthz. */
export async function startBillingLedgerProcess(
  options: BillingLedgerProcessOptions,
): Promise<BillingLedgerProcess> {
  const db: TestDatabase | undefined =
    options.databaseUrl === undefined
      ? await createTestDatabase({ prefix: options.databasePrefix ?? 'billing_process' })
      : undefined;
  const envOn = (httpPort: number, grpcPort: number): AppEnv => ({
    DATABASE_URL: options.databaseUrl ?? db!.url,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    GRPC_PORT: String(grpcPort),
    OPERATOR_TOKEN: options.operatorToken,
    NATS_PREFIX: options.natsPrefix,
    // Tests top up through the account route, as the local stack's demo users do.
    SELF_SERVICE_BILLING: 'true',
    ...options.env,
  });
  let app: AppProcess;
  try {
    await runAppScript('apps/billing-ledger/src/migrate.ts', envOn(0, 0)); // binds no port
    app = await startAppProcess(async () => {
      const env = envOn(await freePort(), await freePort());
      return {
        main: 'apps/billing-ledger/src/main.ts',
        env,
        healthUrl: `http://127.0.0.1:${env['HTTP_PORT']}/healthz`,
        startTimeoutMs: options.startTimeoutMs,
      };
    });
  } catch (error) {
    await db?.drop();
    throw error;
  }
  const url = `http://127.0.0.1:${app.options.env!['HTTP_PORT']}`;
  const grpcPort = Number(app.options.env!['GRPC_PORT']);

  const call: BillingLedgerProcess['call'] = async (method, path, bearer, body, expected) => {
    const response = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (expected === undefined ? response.status >= 300 : response.status !== expected)
      throw new Error(`billing-ledger ${method} ${path}: ${response.status} ${text}`);
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  };

  return {
    url,
    grpcTarget: `127.0.0.1:${grpcPort}`,
    process: app,
    call,
    async createAccount(body) {
      const created = (await call(
        'POST',
        '/api/v1/admin/accounts',
        options.operatorToken,
        body,
        201,
      )) as { account: { id: string }; api_key: { key: string } };
      return { accountId: created.account.id, key: created.api_key.key };
    },
    async createKey(accountKey, name, scopes) {
      const created = await call('POST', '/api/v1/api-keys', accountKey, { name, scopes }, 201);
      return created as { id: string; key: string };
    },
    async stop() {
      await app.stop();
      await db?.drop();
    },
  };
}
