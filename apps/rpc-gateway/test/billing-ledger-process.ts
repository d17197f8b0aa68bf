import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '@meridian/testing';

const ROOT = join(__dirname, '..', '..', '..');

export interface BillingLedgerProcess {
  api: string;
  grpcAddress: string;
  /** REST call with a bearer credential; throws on a status of 300 or more. */
  call(
    method: string,
    path: string,
    bearer: string,
    body?: unknown,
  ): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * The REAL billing-ledger as a child process (migrated database, own NATS namespace; none of its
 * code imported), for gateway tests that need its credentials, revocations and usage.
 */
export async function startBillingLedger(env: {
  databaseUrl: string;
  natsUrl: string;
  natsPrefix: string;
  operatorToken: string;
}): Promise<BillingLedgerProcess> {
  const base = {
    ...process.env,
    DATABASE_URL: env.databaseUrl,
    NATS_URL: env.natsUrl,
    NATS_PREFIX: env.natsPrefix,
    LOG_LEVEL: 'warn',
  };
  const migrate = spawnSync(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/billing-ledger/src/migrate.ts'],
    { cwd: ROOT, env: base, encoding: 'utf8', timeout: 120_000 },
  );
  if (migrate.status !== 0) throw new Error(`migrate failed: ${migrate.stderr}${migrate.stdout}`);
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'apps/billing-ledger/src/main.ts'],
    {
      cwd: ROOT,
      env: {
        ...base,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        GRPC_PORT: String(grpcPort),
        OPERATOR_TOKEN: env.operatorToken,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const api = `http://127.0.0.1:${httpPort}`;
  // A slow start is a busy machine, not a failure: only a process that exits fails early.
  const deadline = Date.now() + 240_000;
  for (;;) {
    const ok = await fetch(`${api}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`billing-ledger did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    api,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    call: async (method, path, bearer, body) => {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path} → ${response.status} ${text}`);
      return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
