import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@meridian/testing';

const ROOT = join(__dirname, '../../../..');
export const OPERATOR_TOKEN = 'dashboard-test-operator-token';

export interface RunningBillingLedger {
  /** REST base, `http://127.0.0.1:<port>/api/v1`. */
  readonly apiUrl: string;
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

/** The real billing-ledger as a child process on its own test database and NATS prefix. */
export async function startBillingLedger(): Promise<RunningBillingLedger> {
  const db: TestDatabase = await createTestDatabase({ prefix: 'dashboard_billing' });
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    HTTP_PORT: String(httpPort),
    HTTP_HOST: '127.0.0.1',
    GRPC_PORT: String(grpcPort),
    OPERATOR_TOKEN,
    NATS_PREFIX: `dash_bl_${process.pid}_${Date.now().toString(36)}`,
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
  return {
    apiUrl: `${base}/api/v1`,
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
