import {
  startAnvil,
  startCuttableTcpRelay,
  type AnvilInstance,
  type CuttableTcpRelay,
} from '@meridian/testing';
import WebSocket from 'ws';
import { provisionNamespace, startGateway, type RunningGateway } from './gateway-harness';

const TOKEN = 'tok_ws_silent_000001';

/**
 * QA's repro (ADR 0203 amendment "silent upstream"): a client subscribed to newHeads through a
 * node whose WebSocket is then blackholed (no close, no data) and whose HTTP hangs. The health
 * checker marked it unhealthy, but the hub stayed on it: 36 s of nothing, then 252 → 288. Here
 * two upstreams lead to one anvil through two TCP relays; the one carrying the hub's socket is
 * blackholed while blocks are mined. The hub gives it up, resubscribes through the other and
 * fills the gap: every block once, in order, under the same id. The liveness settings are short
 * (WS_UPSTREAM_CHECK_MS, WS_UPSTREAM_PONG_TIMEOUT_MS), not slept for at their defaults.
 */
describe('rpc-gateway WebSocket: a blackholed upstream socket is given up, the gap filled', () => {
  let node: AnvilInstance;
  let relays: CuttableTcpRelay[];
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [node, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    relays = await Promise.all([
      startCuttableTcpRelay(node.port),
      startCuttableTcpRelay(node.port),
    ]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': relays.map((relay) => `http://127.0.0.1:${relay.port}`),
      }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-ws-silent', network: 'eth-mainnet', planId: 'pro' },
      }),
      HEALTH_INTERVAL_MS: '200',
      HEALTH_TIMEOUT_MS: '150',
      UPSTREAM_TIMEOUT_MS: '500',
      WS_UPSTREAM_CHECK_MS: '200',
      WS_UPSTREAM_PONG_TIMEOUT_MS: '1000',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all((relays ?? []).map((relay) => relay.close()));
    await Promise.all([node?.stop(), ns?.cleanup()]);
  });

  const rpc = async (method: string, params: unknown[] = []) => {
    const response = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await response.json()) as { result: unknown }).result;
  };
  const until = async (done: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };
  const metrics = async () => (await fetch(`${gateway.url}/metrics`)).text();
  /** The index of the upstream the hub's socket uses, from rpc_gateway_subscription_upstream. */
  const hubUpstream = async (): Promise<number | undefined> => {
    const line = (await metrics())
      .split('\n')
      .find((l) => l.startsWith('rpc_gateway_subscription_upstream{') && l.endsWith(' 1'));
    const match = line?.match(/upstream="(\d+):/);
    return match === null || match === undefined ? undefined : Number(match[1]);
  };

  it('delivers every head mined while the socket was silent, once each, from the other node', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((r) => ws.once('open', r));
    let id: string | undefined;
    const heads: number[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.method === 'eth_subscription' && m.params.subscription === id)
        heads.push(Number(m.params.result.number));
      else if (m.id === 1) id = m.result;
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    await until(() => id !== undefined, 5_000);
    expect(typeof id).toBe('string');
    const start = Number(await rpc('eth_blockNumber'));
    await rpc('evm_mine');
    await until(() => heads.length === 1, 5_000);
    const used = await hubUpstream();
    expect(used === 0 || used === 1).toBe(true);

    relays[used!]!.blackhole();
    for (let i = 0; i < 5; i++) await rpc('evm_mine');
    const last = start + 6;
    await until(() => heads.includes(last), 15_000);
    await rpc('evm_mine');
    await until(() => heads.includes(last + 1), 5_000);
    const seen = await metrics();
    ws.close();

    expect(heads).toEqual(Array.from({ length: 7 }, (_, i) => start + 1 + i));
    expect(seen).toContain(
      `rpc_gateway_subscription_upstream{network="eth-mainnet",upstream="${1 - used!}:`,
    );
    expect(seen).toMatch(
      /rpc_gateway_subscription_upstream_abandoned_total\{network="eth-mainnet",reason="(unhealthy|behind_pool_head|ping_unanswered)"[^}]*\} 1\n/,
    );
    expect(seen).toMatch(
      /rpc_gateway_subscription_last_notification_age_seconds\{network="eth-mainnet"[^}]*\} \d/,
    );
  }, 60_000);
});
