import { createServer } from 'node:http';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

const TOKEN = 'tok_failover_0000001';
const ADDRESS = '0x000000000000000000000000000000000000f00d';

interface RpcItem {
  id?: unknown;
  method: string;
  params?: unknown[];
}

/** How a scripted node treats a call: relay it to anvil, or misbehave. */
type Behaviour =
  | 'relay'
  /** Never answers (a hung node). */
  | 'hang'
  /** HTTP 502 with an HTML page. */
  | 'html_502'
  /** HTTP 429 with a JSON-RPC body. */
  | 'throttled'
  /** Anvil's answer under another id. */
  | 'wrong_id'
  /**
   * A node lagging 3 blocks: anvil's head minus 3 (eth_blockNumber, its health check too), and
   * null for the blocks asked by number (the newest, in the test).
   */
  | 'lag_3'
  /**
   * Every request refused unread, one error object under id null (anvil's answer to params
   * nested past 128 levels).
   */
  | 'refuse'
  /** A batch refused so, whole; a single call relayed. */
  | 'refuse_batch';

const REFUSAL = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'recursion limit exceeded' },
};

/**
 * A scripted node in front of anvil: `health` is how it treats eth_blockNumber (its health
 * check), `calls` every other method. Counts the calls (health checks left out) it received.
 */
async function startScriptedNode(anvil: string) {
  const state = { health: 'relay' as Behaviour, calls: 'relay' as Behaviour, received: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(text) as RpcItem | RpcItem[];
      const items = Array.isArray(body) ? body : [body];
      const health = items.every((c) => c.method === 'eth_blockNumber');
      if (!health) state.received += items.length;
      const behaviour = health ? state.health : state.calls;
      if (behaviour === 'hang') return; // the socket stays open, unanswered
      if (behaviour === 'html_502') {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html><body>502 Bad Gateway</body></html>');
      }
      if (behaviour === 'refuse' || (behaviour === 'refuse_batch' && Array.isArray(body))) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(REFUSAL));
      }
      if (behaviour === 'throttled') {
        res.writeHead(429, { 'content-type': 'application/json' });
        const error = { code: -32005, message: 'rate limit exceeded' };
        return res.end(JSON.stringify(items.map((c) => ({ jsonrpc: '2.0', id: c.id, error }))[0]));
      }
      void fetch(anvil, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      })
        .then((answer) => answer.json() as Promise<{ id: unknown; result?: unknown }>)
        .then(
          (answer) => {
            const fix = (a: { id: unknown; result?: unknown }, call: RpcItem) => {
              if (behaviour === 'wrong_id') a.id = 999;
              if (behaviour === 'lag_3' && call.method === 'eth_blockNumber')
                a.result = `0x${Math.max(0, Number(a.result) - 3).toString(16)}`;
              // Lagging, it has none of the newest blocks the others have.
              if (behaviour === 'lag_3' && call.method === 'eth_getBlockByNumber') a.result = null;
              return a;
            };
            const fixed = Array.isArray(answer)
              ? (answer as { id: unknown }[]).map((a, i) => fix(a, items[i]!))
              : fix(answer, items[0]!);
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(fixed));
          },
          () => res.destroy(),
        );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('rpc-gateway: misbehaving upstream nodes (anvil behind scripted nodes; ADR 0202 amendment)', () => {
  let anvil: AnvilInstance;
  let nodes: Awaited<ReturnType<typeof startScriptedNode>>[];
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway | undefined;

  beforeAll(async () => {
    [anvil, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    nodes = await Promise.all([startScriptedNode(anvil.url), startScriptedNode(anvil.url)]);
    await rpc(anvil.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'anvil_setBalance',
      params: [ADDRESS, '0x2a'],
    });
    await rpc(anvil.url, { jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x20'] });
  });

  afterAll(async () => {
    await Promise.all([...(nodes ?? []).map((n) => n.close()), anvil?.stop(), ns?.cleanup()]);
  });

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    for (const node of nodes)
      Object.assign(node.state, { health: 'relay', calls: 'relay', received: 0 });
  });

  /** A gateway over the two scripted nodes, health checks run by the test (healthCheckNow). */
  const start = async (env: Record<string, string> = {}) => {
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': nodes.map((n) => n.url) }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-failover', network: 'eth-mainnet', planId: 'pro' },
      }),
      HEALTH_INTERVAL_MS: '600000',
      HEALTH_TIMEOUT_MS: '300',
      UPSTREAM_TIMEOUT_MS: '1500',
      UPSTREAM_BATCH_MAX: '1',
      ...env,
    });
    return gateway;
  };
  const call = (method: string, params: unknown[] = [], id: unknown = 1) =>
    rpc(`${gateway!.url}/${TOKEN}`, { jsonrpc: '2.0', id, method, params });
  const cu = () =>
    metricValue(gateway!.url, 'rpc_gateway_usage_cu_total', { network: 'eth-mainnet' });

  it('every node hung: once their checks failed, a call answers -32000 at once, unbilled, and reaches no node', async () => {
    await start();
    for (const node of nodes) node.state.health = node.state.calls = 'hang';
    for (let i = 0; i < 3; i++) await gateway!.runtime.healthCheckNow();
    const billed = await cu();
    const started = performance.now();
    const answer = await call('eth_getBalance', [ADDRESS, 'latest']);
    // QA: 3 attempts × the upstream timeout (here 2 × 1.5 s) for every call.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(answer.json).toMatchObject({
      id: 1,
      error: { code: -32000, message: 'server error: upstream node unavailable' },
    });
    expect(nodes.map((n) => n.state.received)).toEqual([0, 0]);
    expect(await cu()).toBe(billed);
    expect(
      await metricValue(gateway!.url, 'rpc_gateway_upstream_breaker_open', {
        network: 'eth-mainnet',
      }),
    ).toBe(2);
  });

  it.each([
    ['HTTP 502 with HTML', 'html_502', 'bad_answer'],
    ['HTTP 429 with a JSON-RPC body', 'throttled', 'throttled'],
    ['answers under another id', 'wrong_id', 'bad_answer'],
  ] as const)(
    'a node that passes its checks but %s: every call is answered by the other, and it leaves rotation after 3',
    async (_name, behaviour, outcome) => {
      await start();
      nodes[0]!.state.calls = behaviour;
      for (let i = 0; i < 20; i++) {
        const answer = await call('eth_getBalance', [ADDRESS, 'latest'], `c-${i}`);
        expect(answer.json).toEqual({ jsonrpc: '2.0', id: `c-${i}`, result: '0x2a' });
      }
      expect(nodes[0]!.state.received).toBe(3);
      expect(nodes[1]!.state.received).toBe(20);
      expect(
        await metricValue(gateway!.url, 'rpc_gateway_upstream_requests_total', {
          network: 'eth-mainnet',
          outcome,
        }),
      ).toBe(3);
    },
  );

  it('a node 3 blocks behind (within the lag window): eth_blockNumber never goes backwards across 40 calls', async () => {
    await start({ MAX_LAG_BLOCKS: '5' });
    nodes[1]!.state.health = nodes[1]!.state.calls = 'lag_3';
    await gateway!.runtime.healthCheckNow();
    const heads: number[] = [];
    for (let i = 0; i < 40; i++) {
      if (i % 10 === 5)
        await rpc(anvil.url, { jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] });
      const answer = await call('eth_blockNumber');
      heads.push(Number((answer.json as { result: string }).result));
    }
    const backwards = heads.filter((h, i) => i > 0 && h < heads[i - 1]!);
    expect(backwards).toEqual([]);
    // The block just returned is there (QA: null 7 of 30 from the node behind).
    const head = `0x${heads[heads.length - 1]!.toString(16)}`;
    for (let i = 0; i < 10; i++)
      expect(
        ((await call('eth_getBlockByNumber', [head, false])).json as { result: { number: string } })
          .result.number,
      ).toBe(head);
  });

  it("a node refusing a call unread (error under id null): that call's error, relayed; no breaker opens (QA)", async () => {
    await start();
    for (const node of nodes) node.state.calls = 'refuse';
    for (let i = 0; i < 6; i++) {
      const answer = await call('eth_call', [{ to: ADDRESS }, 'latest'], `d-${i}`);
      expect(answer.json).toMatchObject({ id: `d-${i}`, error: { code: -32600 } });
    }
    // No failover: each call reached one node; both nodes still take calls.
    expect(nodes[0]!.state.received + nodes[1]!.state.received).toBe(6);
    expect(
      await metricValue(gateway!.url, 'rpc_gateway_upstream_breaker_open', {
        network: 'eth-mainnet',
      }),
    ).toBe(0);
    for (const node of nodes) node.state.calls = 'relay';
    for (let i = 0; i < 4; i++)
      expect((await call('eth_getBalance', [ADDRESS, 'latest'])).json).toMatchObject({
        result: '0x2a',
      });
  });

  it('a batch refused whole by one error under id null: each call is sent again alone and answered', async () => {
    await start();
    for (const node of nodes) node.state.calls = 'refuse_batch';
    for (let i = 0; i < 4; i++) {
      const answer = await rpc(`${gateway!.url}/${TOKEN}`, [
        { jsonrpc: '2.0', id: 'a', method: 'eth_getBalance', params: [ADDRESS, 'latest'] },
        { jsonrpc: '2.0', id: 'b', method: 'eth_getBalance', params: [ADDRESS, 'latest'] },
      ]);
      expect(answer.json).toEqual([
        { jsonrpc: '2.0', id: 'a', result: '0x2a' },
        { jsonrpc: '2.0', id: 'b', result: '0x2a' },
      ]);
    }
    expect(
      await metricValue(gateway!.url, 'rpc_gateway_upstream_breaker_open', {
        network: 'eth-mainnet',
      }),
    ).toBe(0);
  });
});
