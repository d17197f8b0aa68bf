import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Pool } from 'undici';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { provisionNamespace, startGateway } from './gateway-harness';

/**
 * A gateway that stops while calls keep arriving (SIGTERM, or a worker whose primary died) bills
 * every call it answered (ADR 0103: "a graceful stop loses nothing"). Found by the fault suite
 * (tools/stack/faults.e2e-spec.ts, ADR 0504): the usage flusher's last flush ran before the HTTP
 * server closed, so calls answered on open keep-alive connections after it were never billed.
 */
const TOKEN = 'tok_shutdown_billing_0000001';
const CU_PER_CALL = 20; // network E

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
    const pool = new Pool(gateway.url, { connections: 8, pipelining: 1 });
    let answered = 0;
    let stopping = false;
    let answeredWhileStopping = 0;
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
            answered += 1;
            if (stopping) answeredWhileStopping += 1;
          }
        } catch {
          if (stopping) return; // the server closed the connection: it is gone
        }
      }
    };
    const loops = Array.from({ length: 16 }, loop);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopping = true;
    const stopped = Date.now();
    await gateway.stop();
    // Busy keep-alive connections do not hold the stop off (they used to, until SIGKILL).
    expect(Date.now() - stopped).toBeLessThan(5_000);
    await Promise.all(loops);
    await pool.close();

    expect(answered).toBeGreaterThan(0);
    // The case of the defect: calls kept being answered while the app was closing.
    expect(answeredWhileStopping).toBeGreaterThan(0);
    expect(await billedCu(namespace)).toBe(answered * CU_PER_CALL);
  }, 60_000);
});

/** CU in every usage flush published to the namespace's BILLING stream. */
async function billedCu(namespace: { url: string; prefix: string }): Promise<number> {
  const nc = await connect({ servers: namespace.url });
  const consumer = await jetstream(nc).consumers.get(`${namespace.prefix}_BILLING`);
  let cu = 0;
  const messages = await consumer.fetch({ max_messages: 1_000, expires: 1_000 });
  for await (const m of messages)
    for (const account of m.json<{ accounts: Array<{ totalCu: number }> }>().accounts)
      cu += account.totalCu;
  await nc.close();
  return cu;
}
