import pino from 'pino';
import { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { UpstreamPool } from '../upstreams/upstream-pool';
import { NetworkSubscriptions, UpstreamSubscribeError } from './subscription-hub';

/**
 * A node's WebSocket (a ws server of the test's own): it answers eth_subscribe after a short
 * while, refusing params that name "refuse" with -32602 as a node refuses a bad filter, and
 * counts the eth_subscribe calls it got.
 */
async function fakeNode(): Promise<{ url: string; subscribes: () => number; close(): void }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  let subscribes = 0;
  server.on('connection', (socket) =>
    socket.on('message', (data) => {
      const call = JSON.parse(data.toString()) as { id: number; method: string; params: unknown };
      if (call.method !== 'eth_subscribe') return;
      subscribes++;
      const answer = JSON.stringify(call.params).includes('refuse')
        ? { jsonrpc: '2.0', id: call.id, error: { code: -32602, message: 'invalid argument 0' } }
        : { jsonrpc: '2.0', id: call.id, result: `0xs${subscribes}` };
      setTimeout(() => socket.send(JSON.stringify(answer)), 30);
    }),
  );
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    subscribes: () => subscribes,
    close: () => {
      for (const client of server.clients) client.terminate();
      server.close();
    },
  };
}

describe('NetworkSubscriptions: callers that share an upstream subscription share its outcome', () => {
  let node: Awaited<ReturnType<typeof fakeNode>>;
  let subs: NetworkSubscriptions;

  beforeEach(async () => {
    node = await fakeNode();
    const upstream = { index: 0, healthy: true, spec: { wsUrl: node.url } };
    const pool = {
      upstreams: [upstream],
      pick: (tried: ReadonlySet<number>) => (tried.has(0) ? undefined : upstream),
    } as unknown as UpstreamPool;
    subs = new NetworkSubscriptions(
      'eth-mainnet',
      pool,
      new GatewayMetrics(new Registry()),
      pino({ level: 'silent' }),
    );
  });

  afterEach(() => {
    subs.close();
    node.close();
  });

  const sink = { notify: () => true };
  const outcome = (params: unknown[]) =>
    subs.subscribe(params, sink).then(
      (id) => ({ id }),
      (error: unknown) => ({ error }),
    );

  it("identical calls sent at once all get the node's refusal (UpstreamSubscribeError), not 'unavailable'", async () => {
    // QA: 3 identical bad eth_subscribe at once: 2 got -32602, 1 got -32000; with 100, 93.
    const params = ['logs', { address: `0x${'12'.repeat(20)}`, note: 'refuse' }];
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => outcome(params)));
    for (const one of outcomes) {
      expect(one).toHaveProperty('error');
      expect((one as { error: unknown }).error).toBeInstanceOf(UpstreamSubscribeError);
      expect((one as { error: Error }).error.message).toBe('invalid argument 0');
    }
    expect(node.subscribes()).toBe(1);
    expect(subs.upstreamSubscriptionCount).toBe(0);
  });

  it('identical calls sent at once share one upstream subscription, each with its own id', async () => {
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => outcome(['newHeads'])));
    const ids = outcomes.map((one) => (one as { id: string }).id);
    expect(new Set(ids).size).toBe(5);
    expect(node.subscribes()).toBe(1);
    expect(subs.upstreamSubscriptionCount).toBe(1);
  });
});
