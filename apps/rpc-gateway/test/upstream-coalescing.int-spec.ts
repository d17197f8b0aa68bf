import { Agent, request } from 'node:http';
import {
  isHealthCheck,
  startAnvil,
  startFakeUpstreamNode,
  type AnvilInstance,
  type FakeNodeBody,
  type FakeUpstreamNode,
} from '@meridian/testing';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;
const TOKEN = 'tok_coalesce_0000001';
const CLIENTS = 8;

/**
 * Sends each body from its own client connection, all written before the event loop turns
 * again, so the in-process gateway reads them in one turn. A first round of requests opens the
 * connections (and has the gateway accept them), so none is still connecting.
 */
async function sendTogether(url: string, bodies: readonly unknown[]): Promise<unknown[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: bodies.length });
  const post = (body: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const text = JSON.stringify(body);
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  try {
    await Promise.all(bodies.map(() => post({ jsonrpc: '2.0', id: 0, method: 'eth_chainId' })));
    return await Promise.all(bodies.map(post));
  } finally {
    agent.destroy();
  }
}

const address = (i: number) => `0x${'c0ffee'.padEnd(36, '0')}${i.toString(16).padStart(4, '0')}`;
const balanceOf = (i: number) => `0x${(1_000_000 + i).toString(16)}`;

describe('rpc-gateway: same-turn upstream batching (anvil behind fake upstream nodes)', () => {
  let anvil: AnvilInstance;
  let nodes: FakeUpstreamNode[];
  /** Whichever node first receives a batch with this method goes down before answering it. */
  let goesDownOnBatchOf: string | undefined;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let env: Record<string, string>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [anvil, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    nodes = await Promise.all([startFakeUpstreamNode(anvil.url), startFakeUpstreamNode(anvil.url)]);
    const goDownOnTrigger = (body: FakeNodeBody, node: FakeUpstreamNode) => {
      const trigger = goesDownOnBatchOf;
      if (trigger === undefined || !Array.isArray(body) || !body.some((c) => c.method === trigger))
        return;
      goesDownOnBatchOf = undefined;
      // Dead: every request dropped unanswered from this one on, health checks too.
      node.health = node.calls = 'drop';
    };
    for (const node of nodes) node.onRequest = goDownOnTrigger;
    for (let i = 0; i < CLIENTS; i++)
      await rpc(anvil.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'anvil_setBalance',
        params: [address(i), balanceOf(i)],
      });
    env = {
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': nodes.map((n) => n.url) }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-coalesce', network: 'eth-mainnet', planId: 'pro' },
      }),
    };
    gateway = await startGateway(env);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([...(nodes ?? []).map((n) => n.close()), anvil?.stop(), ns?.cleanup()]);
  });

  beforeEach(() => {
    for (const node of nodes) node.bodies = [];
  });

  /** What reached the nodes, health checks left out: a method name, or a batch's method names. */
  const upstreamShapes = () =>
    nodes
      .flatMap((n) => n.bodies)
      .filter((b) => !isHealthCheck(b))
      .map((b) => (Array.isArray(b) ? b.map((c) => c.method) : b.method));

  const balanceCalls = () =>
    Array.from({ length: CLIENTS }, (_, i) => ({
      jsonrpc: '2.0',
      id: i % 2 === 0 ? `client-${i}` : 1000 + i,
      method: 'eth_getBalance',
      params: [address(i), 'latest'],
    }));

  const expectOwnAnswers = (answers: unknown[]) =>
    expect(answers).toEqual(
      balanceCalls().map((call, i) => ({ jsonrpc: '2.0', id: call.id, result: balanceOf(i) })),
    );

  it('single calls of concurrent clients reach the node as one batch; each client gets its own answer and id', async () => {
    const metric = (name: string) => metricValue(gateway.url, name, { network: 'eth-mainnet' });
    const exchangesBefore = await metric('rpc_gateway_upstream_batch_size_count');
    const callsBefore = await metric('rpc_gateway_upstream_batch_size_sum');
    const answers = await sendTogether(`${gateway.url}/${TOKEN}`, balanceCalls());
    expectOwnAnswers(answers);
    expect(upstreamShapes()).toEqual([Array(CLIENTS).fill('eth_getBalance')]);
    // The warm-up round's eth_chainId is answered locally and never reaches the queue.
    expect(await metric('rpc_gateway_upstream_batch_size_count')).toBe(exchangesBefore + 1);
    expect(await metric('rpc_gateway_upstream_batch_size_sum')).toBe(callsBefore + CLIENTS);
  });

  it('eth_call, eth_getLogs, eth_sendRawTransaction and filter calls keep their own exchanges', async () => {
    const raw = await privateKeyToAccount(KEY_0).signTransaction({
      chainId: 1,
      type: 'eip1559',
      to: '0x000000000000000000000000000000000000bEEF',
      value: 1n,
      nonce: 0,
      gas: 21000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const call = (id: number, method: string, params: unknown[]) => ({
      jsonrpc: '2.0',
      id,
      method,
      params,
    });
    const first = (await sendTogether(`${gateway.url}/${TOKEN}`, [
      call(1, 'eth_getBalance', [address(0), 'latest']),
      call(2, 'eth_call', [{ to: address(1), data: '0x' }, 'latest']),
      call(3, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x0' }]),
      call(4, 'eth_sendRawTransaction', [raw]),
      call(5, 'eth_newBlockFilter', []),
      call(6, 'eth_getBalance', [address(1), 'latest']),
    ])) as { id: number; result?: unknown; error?: unknown }[];
    expect(first.map((a) => [a.id, a.error])).toEqual(
      [1, 2, 3, 4, 5, 6].map((id) => [id, undefined]),
    );
    expect(first[0]!.result).toBe(balanceOf(0));
    expect(first[5]!.result).toBe(balanceOf(1));
    const filterId = first[4]!.result as string;
    const second = (await sendTogether(`${gateway.url}/${TOKEN}`, [
      call(7, 'eth_getFilterChanges', [filterId]),
      call(8, 'eth_getBalance', [address(2), 'latest']),
      call(9, 'eth_getBalance', [address(3), 'latest']),
    ])) as { id: number; result?: unknown; error?: unknown }[];
    expect(second.map((a) => a.error)).toEqual([undefined, undefined, undefined]);
    const shapes = upstreamShapes();
    for (const method of [
      'eth_call',
      'eth_getLogs',
      'eth_sendRawTransaction',
      'eth_newBlockFilter',
      'eth_getFilterChanges',
    ])
      expect(shapes.filter((s) => s === method)).toHaveLength(1);
    const batches = shapes.filter(Array.isArray);
    expect(batches).toEqual([
      ['eth_getBalance', 'eth_getBalance'],
      ['eth_getBalance', 'eth_getBalance'],
    ]);
  });

  it('UPSTREAM_BATCH_MAX=1 sends every call on its own', async () => {
    const unbatched = await startGateway({
      ...env,
      UPSTREAM_BATCH_MAX: '1',
      GRPC_ENABLED: 'false',
    });
    try {
      for (const node of nodes) node.bodies = [];
      expectOwnAnswers(await sendTogether(`${unbatched.url}/${TOKEN}`, balanceCalls()));
      expect(upstreamShapes()).toEqual(Array(CLIENTS).fill('eth_getBalance'));
    } finally {
      await unbatched.stop();
    }
  });

  it('failover: when the node of a coalesced exchange goes down, the whole batch goes to the other node', async () => {
    goesDownOnBatchOf = 'eth_getBalance';
    expectOwnAnswers(await sendTogether(`${gateway.url}/${TOKEN}`, balanceCalls()));
    const batch = Array(CLIENTS).fill('eth_getBalance');
    const [down, up] = nodes[0]!.calls === 'drop' ? nodes : [nodes[1]!, nodes[0]!];
    expect(down.calls).toBe('drop');
    expect(down.bodies.filter(Array.isArray).map((b) => b.map((c) => c.method))).toEqual([batch]);
    expect(up.bodies.filter(Array.isArray).map((b) => b.map((c) => c.method))).toEqual([batch]);
  });
});
