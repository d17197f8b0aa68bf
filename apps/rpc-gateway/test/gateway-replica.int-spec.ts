import { unpackAccounts, type UsageFlushedV2 } from '@meridian/contracts';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { startAnvil, type AnvilInstance, type AppProcess } from '@meridian/testing';
import { metricValue, provisionNamespace } from './gateway-harness';
import { startGatewayProcess, type GatewayLogLine } from './gateway-process';

/**
 * One replica as several processes (GATEWAY_WORKERS=2, ADR 0204), run as `main.ts` is run in
 * production: node:cluster spreads connections over the workers, while the plan RPS, the
 * upstream subscriptions, the per-account subscription count and the metrics stay the replica's.
 */
const LIMITED = 'tok_replica_limited_000001';
const WS_TOKEN = 'tok_replica_ws_0000000001';
const RPS = 20;
const CU_PER_CALL = 20; // network E

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}

describe('rpc-gateway replica with several worker processes', () => {
  let anvil: AnvilInstance;
  let namespace: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: AppProcess;
  let url: string;
  let lines: GatewayLogLine[];
  const billed = new Map<string, number>();

  const bill = (account: string, calls: number) =>
    billed.set(account, (billed.get(account) ?? 0) + calls * CU_PER_CALL);

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    namespace = await provisionNamespace();
    ({
      app: gateway,
      url,
      lines,
    } = await startGatewayProcess(
      {
        REGION: 'eu',
        GATEWAY_WORKERS: '2',
        LOG_LEVEL: 'info',
        REQUEST_LOGS: 'true',
        HEALTH_INTERVAL_MS: '300',
        USAGE_FLUSH_MS: '200',
        WS_MAX_SUBSCRIPTIONS_PER_ACCOUNT: '3',
        NATS_URL: namespace.url,
        NATS_PREFIX: namespace.prefix,
        UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [LIMITED]: { accountId: 'replica-limited', network: 'eth-mainnet', nodeRps: RPS },
          [WS_TOKEN]: { accountId: 'replica-ws', network: 'eth-mainnet', nodeRps: 1_000 },
        }),
      },
      { workers: 2, startTimeoutMs: 100_000 },
    ));
  }, 120_000);

  afterAll(async () => {
    gateway?.kill('SIGKILL');
    await anvil?.stop();
    await namespace?.cleanup();
  });

  const workersThatLogged = (msg: string, account: string) =>
    new Set(lines.filter((l) => l.msg === msg && l.account === account).map((l) => l.worker));

  it('spreads connections over both workers and holds the plan RPS for the whole replica', async () => {
    const pool = new Pool(url, { connections: 8 });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 3 * RPS }, (_, i) =>
        pool
          .request({
            path: `/${LIMITED}`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }),
          })
          .then(async (r) => ({ status: r.statusCode, body: await r.body.text() })),
      ),
    );
    const elapsedMs = Date.now() - started;
    await pool.close();
    const admitted = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 429);
    expect(admitted + refused.length).toBe(3 * RPS);
    // Two processes each with their own bucket would admit about twice the rate.
    expect(admitted).toBeLessThanOrEqual(RPS + Math.ceil((elapsedMs * RPS) / 1000));
    expect(admitted).toBeGreaterThanOrEqual(RPS - 4);
    expect(JSON.parse(refused[0]!.body).error.code).toBe(-32005);
    bill('replica-limited', admitted);
    await until(() => workersThatLogged('rpc request', 'replica-limited').size === 2);
  });

  it('one upstream subscription per replica, notifications to clients of every worker, one per-account count', async () => {
    const sockets = await Promise.all(
      Array.from({ length: 4 }, () => openSocket(`${url.replace('http', 'ws')}/${WS_TOKEN}`)),
    );
    const answers: RpcAnswer[] = [];
    for (const [i, ws] of sockets.entries())
      answers.push(await ask(ws, i + 1, 'eth_subscribe', ['newHeads']));
    const ids = answers.filter((a) => typeof a.result === 'string').map((a) => a.result as string);
    expect(ids).toHaveLength(3);
    expect(answers.find((a) => a.error)?.error).toEqual({
      code: -32005,
      message: 'limit exceeded: at most 3 subscriptions per account on this gateway replica',
    });
    bill('replica-ws', 3);
    // The request lines reach this test through the workers' stdout after the answers do.
    await until(() => workersThatLogged('rpc ws message', 'replica-ws').size === 2);

    const heads = sockets.filter((_, i) => answers[i]!.result).map((ws) => nextNotification(ws));
    await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"evm_mine","params":[]}',
    });
    const received = await Promise.all(heads);
    expect(received.map((n) => n?.params.subscription).sort()).toEqual([...ids].sort());

    expect(await metricValue(url, 'rpc_gateway_upstream_subscriptions', { type: 'newHeads' })).toBe(
      1,
    );
    expect(await metricValue(url, 'rpc_gateway_client_subscriptions', { type: 'newHeads' })).toBe(
      3,
    );
    expect(await metricValue(url, 'rpc_gateway_ws_connections', {})).toBe(4);
    for (const ws of sockets) ws.close();
    await until(async () => (await metricValue(url, 'rpc_gateway_ws_connections', {})) === 0);
    await until(
      async () =>
        (await metricValue(url, 'rpc_gateway_upstream_subscriptions', { type: 'newHeads' })) === 0,
    );
  });

  it('replaces a worker that dies; the replica keeps serving', async () => {
    // Everything answered so far is published first: a killed worker loses its last window.
    await until(async () => sameMap(await recordedUsage(namespace), billed));
    const listening = () => lines.filter((l) => l.msg === 'rpc-gateway listening');
    // The replica's newest process start, which a restart moves (MeridianAppRestarting).
    const started = () => metricValue(url, 'process_start_time_seconds', {});
    const before = await started();
    expect(before).toBeGreaterThan(0);
    const victim = listening()[0]!.pid!;
    process.kill(victim, 'SIGKILL');
    await until(() => listening().length === 3, 30_000);
    expect(listening()[2]!.pid).not.toBe(victim);
    await until(async () => (await started()) > before, 10_000);
    const pool = new Pool(url, { connections: 4 });
    for (let i = 0; i < 4; i++) {
      const answer = await pool.request({
        path: `/${WS_TOKEN}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      });
      expect(answer.statusCode).toBe(200);
      await answer.body.text();
    }
    await pool.close();
    bill('replica-ws', 4);
  }, 60_000);

  it('on SIGTERM every worker flushes its usage before the replica exits: billed CU equal the calls answered', async () => {
    gateway.kill('SIGTERM');
    expect((await gateway.exited()).code).toBe(0);

    expect(await recordedUsage(namespace)).toEqual(billed);
  });
});

/** CU per account in the usage flushes published to the namespace's BILLING stream so far. */
async function recordedUsage(namespace: {
  url: string;
  prefix: string;
}): Promise<Map<string, number>> {
  const nc = await connect({ servers: namespace.url });
  const consumer = await jetstream(nc).consumers.get(`${namespace.prefix}_BILLING`);
  const recorded = new Map<string, number>();
  const messages = await consumer.fetch({ max_messages: 1_000, expires: 1_000 });
  for await (const m of messages) {
    for (const account of unpackAccounts(m.json<UsageFlushedV2>()))
      recorded.set(account.accountId, (recorded.get(account.accountId) ?? 0) + account.totalCu);
  }
  await nc.close();
  return recorded;
}

function sameMap(a: Map<string, number>, b: Map<string, number>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function openSocket(address: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(address);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function ask(ws: WebSocket, id: number, method: string, params: unknown[]): Promise<RpcAnswer> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as RpcAnswer & { id?: number };
      if (message.id !== id) return;
      ws.off('message', onMessage);
      resolve(message);
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
}

/** The next eth_subscription message on the socket, or undefined after 5 s (no subscription). */
function nextNotification(
  ws: WebSocket,
): Promise<{ params: { subscription: string } } | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 5_000);
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as {
        method?: string;
        params: { subscription: string };
      };
      if (message.method !== 'eth_subscription') return;
      clearTimeout(timer);
      resolve(message);
    });
  });
}
