import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { answers, httpOk, waitFor } from './probe';

/**
 * `npm start` end to end with the embedded fallbacks forced: nothing answers on the chosen
 * Postgres and NATS ports, so the launcher must start PGlite and nats-server itself, bring every
 * app to ready and write endpoints.json; SIGINT must stop every child.
 */
describe('local stack launcher', () => {
  const root = resolve(__dirname, '../..');
  const dir = mkdtempSync(join(tmpdir(), 'meridian-stack-'));
  const base = 20_000 + Math.floor(Math.random() * 400) * 100;
  const pgPort = base + 90;
  const natsPort = base + 91;
  let launcher: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    if (launcher && launcher.exitCode === null) {
      launcher.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the whole stack on embedded Postgres and NATS, then stops every child on SIGINT', async () => {
    expect(await answers('127.0.0.1', pgPort)).toBe(false);
    expect(await answers('127.0.0.1', natsPort)).toBe(false);
    const env: NodeJS.ProcessEnv = { ...process.env, STACK_DIR: dir, STACK_PORT_BASE: String(base), STACK_PG_PORT: String(pgPort), STACK_NATS_PORT: String(natsPort), LOG_LEVEL: 'warn' };
    delete env['DATABASE_URL'];
    delete env['NATS_URL'];
    delete env['NATS_PREFIX'];
    launcher = spawn(process.execPath, ['-r', '@swc-node/register', 'tools/stack/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    launcher.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    launcher.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => launcher!.on('exit', (code) => resolveExit(code)));

    const endpointsFile = join(dir, 'endpoints.json');
    await waitFor('endpoints.json', async () => existsSync(endpointsFile) || launcher!.exitCode !== null, 170_000, 500);
    if (!existsSync(endpointsFile)) throw new Error(`launcher exited early:\n${output.slice(-4000)}`);

    const endpoints = JSON.parse(readFileSync(endpointsFile, 'utf8'));
    expect(output).toContain('embedded Postgres (PGlite) listening');
    expect(output).toContain('[nats]');
    expect(Object.keys(endpoints.apps).sort()).toEqual(
      ['audit-api', 'billing-ledger', 'chain-indexer', 'delivery-worker', 'rpc-gateway-asia', 'rpc-gateway-eu', 'rpc-gateway-shared', 'rpc-gateway-us', 'webhook-matcher'].sort(),
    );
    for (const url of Object.values(endpoints.apps) as string[]) {
      expect(await httpOk(`${url}/readyz`)).toBe(true);
    }
    expect(Object.keys(endpoints.devnets).sort()).toEqual(['eth-mainnet', 'opbnb-mainnet', 'polygon-mainnet']);
    for (const key of ['eu', 'us', 'asia', 'shared']) expect(endpoints.rpc[key]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(endpoints.audit).toMatch(/\/v1$/);
    expect(endpoints.webhooks).toMatch(/\/api\/v1$/);
    expect(endpoints.account).toMatch(/\/api\/v1$/);

    launcher.kill('SIGINT');
    expect(await exited).toBe(0);
    await waitFor('ports to close', async () => !(await answers('127.0.0.1', pgPort)) && !(await answers('127.0.0.1', natsPort)), 10_000);
    for (const url of Object.values(endpoints.apps) as string[]) {
      expect(await httpOk(`${url}/healthz`).catch(() => false)).toBe(false);
    }
  }, 240_000);
});
