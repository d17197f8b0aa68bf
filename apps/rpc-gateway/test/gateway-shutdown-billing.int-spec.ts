import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { UsageFlushedV2 } from '@meridian/contracts';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Pool } from 'undici';
import { freePort, startAnvil, type AnvilInstance } from '@meridian/testing';
import { provisionNamespace, startGateway } from './gateway-harness';

/**
 * A gateway that stops while calls keep arriving (SIGTERM, or a worker whose primary died) bills
 * every call it answered (ADR 0103: "a graceful stop loses nothing"). Found by the fault suite
 * (tools/stack/faults.e2e-spec.ts, ADR 0504): the usage flusher's last flush ran before the HTTP
 * server closed, so calls answered on open keep-alive connections after it were never billed;
 * and a worker whose primary was killed exited at once (node:cluster's own reaction), unflushed.
 */
const TOKEN = 'tok_shutdown_billing_0000001';
const CU_PER_CALL = 20; // network E
const ROOT = join(__dirname, '..', '..', '..');

/** Calls `eth_blockNumber` on 16 loops over keep-alive connections until told to stop. */
function keepCalling(url: string) {
  const pool = new Pool(url, { connections: 8, pipelining: 1 });
  const state = { answered: 0, stopping: false };
  const loop = async () => {
    for (;;) {
      try {
        const answer = await pool.request({
          method: 'POST',
          path: `/${TOKEN}/`,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
        });
        const body = (await answer.body.json()) as { result?: unknown };
        if (answer.statusCode === 200 && body.result !== undefined) {
          state.answered += 1;
        }
      } catch {
        if (state.stopping) return; // the server closed the connection: it is gone
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  const loops = Array.from({ length: 16 }, loop);
  return {
    state,
    /** Resolves once every loop has seen the server gone. */
    async done(): Promise<void> {
      await Promise.all(loops);
      await pool.close();
    },
  };
}

describe('rpc-gateway stopping under load', () => {
  let anvil: AnvilInstance;
  let namespace: Awaited<ReturnType<typeof provisionNamespace>>;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    namespace = await provisionNamespace();
  }, 60_000);

  afterAll(async () => {
    await anvil?.stop();
    await namespace?.cleanup();
  });

  it('bills every call answered, including those answered while it shuts down', async () => {
    const gateway = await startGateway({
      NATS_URL: namespace.url,
      NATS_PREFIX: namespace.prefix,
      REGION: 'eu',
      GRPC_ENABLED: 'false',
      USAGE_FLUSH_MS: '1000',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'shutdown-billing', network: 'eth-mainnet', nodeRps: 100_000 },
      }),
    });
    const load = keepCalling(gateway.url);
    await new Promise((resolve) => setTimeout(resolve, 500));
    load.state.stopping = true;
    const stopped = Date.now();
    await gateway.stop();
    // Busy keep-alive connections do not hold the stop off (they used to, until SIGKILL).
    expect(Date.now() - stopped).toBeLessThan(5_000);
    await load.done();
    const { answered } = load.state;

    expect(answered).toBeGreaterThan(0);
    // Calls answered while the app closes (how many depends on the machine's pace; on a quiet
    // one the server may close before any) are billed like the others: before the fix they
    // were not, and the stop waited for SIGKILL.
    expect(await billedCu(namespace)).toBe(answered * CU_PER_CALL);
  }, 60_000);

  it('GATEWAY_WORKERS=2, the primary killed (kill -9): its workers stop as on SIGTERM and bill every call they answered', async () => {
    const replica = await provisionNamespace();
    const port = await freePort();
    const gateway = spawn(
      process.execPath,
      ['-r', '@swc-node/register', join(ROOT, 'apps/rpc-gateway/src/main.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          REGION: 'eu',
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(port),
          GRPC_ENABLED: 'false',
          GATEWAY_WORKERS: '2',
          LOG_LEVEL: 'info',
          USAGE_FLUSH_MS: '1000',
          NATS_URL: replica.url,
          NATS_PREFIX: replica.prefix,
          UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
          STATIC_ACCESS_TOKENS: JSON.stringify({
            [TOKEN]: { accountId: 'shutdown-billing', network: 'eth-mainnet', nodeRps: 100_000 },
          }),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const workers: number[] = [];
      await new Promise<void>((resolve, reject) => {
        gateway.once('exit', (code) => reject(new Error(`gateway exited early (${code})`)));
        createInterface({ input: gateway.stdout! }).on('line', (text) => {
          const line = (() => {
            try {
              return JSON.parse(text) as { msg?: string; pid?: number };
            } catch {
              return {};
            }
          })();
          if (line.msg === 'rpc-gateway listening' && workers.push(line.pid!) === 2) resolve();
        });
      });
      const load = keepCalling(`http://127.0.0.1:${port}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      load.state.stopping = true;
      gateway.kill('SIGKILL');
      await load.done();
      const gone = (pid: number) => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      };
      const deadline = Date.now() + 20_000;
      while (!workers.every(gone) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(workers.every(gone)).toBe(true);

      expect(load.state.answered).toBeGreaterThan(0);
      expect(await billedCu(replica)).toBe(load.state.answered * CU_PER_CALL);
    } finally {
      if (gateway.exitCode === null) gateway.kill('SIGKILL');
      await replica.cleanup();
    }
  }, 120_000);
});

/** CU in every usage flush published to the namespace's BILLING stream. */
async function billedCu(namespace: { url: string; prefix: string }): Promise<number> {
  const nc = await connect({ servers: namespace.url });
  const consumer = await jetstream(nc).consumers.get(`${namespace.prefix}_BILLING`);
  let cu = 0;
  const messages = await consumer.fetch({ max_messages: 1_000, expires: 1_000 });
  for await (const m of messages) cu += m.json<UsageFlushedV2>().totalCu;
  await nc.close();
  return cu;
}
