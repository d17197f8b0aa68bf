import pino from 'pino';
import { Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { UpstreamPool } from '../upstreams/upstream-pool';
import {
  headLagMargin,
  logMemoryBlocks,
  MAX_BACKFILL_BLOCKS,
  MAX_REMEMBERED_LOG_BYTES,
  NetworkSubscriptions,
  subscriptionGap,
  UpstreamSubscribeError,
} from './subscription-hub';

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

/**
 * A scripted node for the gap a resubscribe leaves: a chain of block hashes the test rewrites
 * (a reorg), logs per block, eth_subscribe / eth_getBlockByNumber / eth_getLogs answered from
 * them, notifications sent when the test says, and the connection dropped when it says.
 */
async function scriptedNode(
  chain = new Map<number, string>(),
  logsOf = new Map<number, string[]>(),
) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  let silent = false;
  const subs = new Map<string, string>();
  let next = 0;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const head = () => Math.max(...chain.keys());
  const block = (n: number) =>
    chain.has(n) ? { number: hex(n), hash: chain.get(n), transactions: [], size: '0x1' } : null;
  const log = (n: number, i: number) => ({
    blockNumber: hex(n),
    blockHash: chain.get(n),
    logIndex: hex(i),
    data: logsOf.get(n)![i],
    removed: false,
  });
  server.on('connection', (socket) =>
    socket.on('message', (data) => {
      const call = JSON.parse(data.toString()) as {
        id: number;
        method: string;
        params: [string | { fromBlock: string; toBlock: string }];
      };
      const [first] = call.params;
      let result: unknown = null;
      if (call.method === 'eth_subscribe') {
        result = `0xs${++next}`;
        subs.set(String(first), result as string);
      } else if (call.method === 'eth_getBlockByNumber')
        result = block(first === 'latest' ? head() : Number(first));
      else if (call.method === 'eth_getLogs' && typeof first === 'object') {
        const found = [];
        for (let n = Number(first.fromBlock); n <= Number(first.toBlock); n++)
          for (let i = 0; i < (logsOf.get(n)?.length ?? 0); i++) found.push(log(n, i));
        result = found;
      }
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
    }),
  );
  const send = (type: string, result: unknown) => {
    if (silent) return;
    for (const client of server.clients)
      client.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'eth_subscription',
          params: { subscription: subs.get(type), result },
        }),
      );
  };
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    /** Mines block n with `hash` and logs, without telling anyone. */
    put: (n: number, hash: string, logs: string[] = []) => {
      chain.set(n, hash);
      logsOf.set(n, logs);
    },
    /** Mines block n and notifies it (header, then its logs). */
    mine(n: number, hash: string, logs: string[] = []) {
      this.put(n, hash, logs);
      send('newHeads', block(n));
      logs.forEach((_, i) => send('logs', log(n, i)));
    },
    drop: () => {
      for (const client of server.clients) client.terminate();
    },
    /** Keeps every connection open but reads nothing, answers nothing, pings included. */
    blackhole: () => {
      silent = true;
      for (const client of server.clients)
        (client as unknown as { _socket: { pause(): void } })._socket.pause();
    },
    connections: () => server.clients.size,
    close: () => {
      for (const client of server.clients) client.terminate();
      server.close();
    },
  };
}

describe('NetworkSubscriptions: a resubscribe fills the gap (ADR 0203 amendment)', () => {
  let node: Awaited<ReturnType<typeof scriptedNode>>;
  let subs: NetworkSubscriptions;
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(done()).toBe(true);
  };

  beforeEach(async () => {
    node = await scriptedNode();
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

  function collect() {
    const got: Array<{ id: string; result: Record<string, unknown> }> = [];
    const ended: Array<[string, number]> = [];
    return {
      got,
      ended,
      sink: {
        notify: (id: string, text: string) => got.push({ id, result: JSON.parse(text) }) > 0,
        end: (id: string, missedAbove: number) => void ended.push([id, missedAbove]),
      },
    };
  }

  it('re-delivers the new chain from the fork when the gap held a reorg; logs withdrawn first', async () => {
    const client = collect();
    node.put(1, '0xa1');
    const heads = await subs.subscribe(['newHeads'], client.sink);
    const logs = await subs.subscribe(['logs', {}], client.sink);
    await new Promise((r) => setTimeout(r, 50));
    node.mine(2, '0xa2', ['x2']);
    node.mine(3, '0xa3', ['x3']);
    await until(() => client.got.length === 4);
    node.drop();
    // While away: 3 is replaced, 4 and 5 are mined on the new branch.
    node.put(3, '0xb3', ['y3']);
    node.put(4, '0xb4', ['y4']);
    node.put(5, '0xb5');
    await until(() => client.got.length === 4 + 3 + 3);
    node.mine(6, '0xb6', ['y6']);
    await until(() => client.got.length === 4 + 3 + 3 + 2);
    await new Promise((r) => setTimeout(r, 50));
    const seen = (id: string) =>
      client.got
        .filter((g) => g.id === id)
        .map((g) =>
          id === heads
            ? `${Number(g.result.number)}:${String(g.result.hash)}`
            : `${String(g.result.data)}${g.result.removed === true ? ' removed' : ''}`,
        );
    expect(seen(heads)).toEqual(['2:0xa2', '3:0xa3', '3:0xb3', '4:0xb4', '5:0xb5', '6:0xb6']);
    expect(seen(logs)).toEqual(['x2', 'x3', 'x3 removed', 'y3', 'y4', 'y6']);
    // Filled-in headers as newHeads has them: no body fields.
    const filled = client.got.find((g) => g.result.hash === '0xb4')!.result;
    expect(filled).not.toHaveProperty('transactions');
    expect(filled).not.toHaveProperty('size');
    expect(client.ended).toEqual([]);
  });

  /**
   * QA MM: logs t1 (block 2) and t2 (block 4) delivered, the upstream dropped, a reorg replaces
   * 2–4 with t1 in 3 and t2 gone. geth's shape: every delivered log of a replaced block again
   * with removed: true (ascending), then the new branch's logs; nothing else, nothing twice.
   * The old code withdrew t2 only (it checked the last log's block) and never sent t1 in 3.
   */
  async function reorgUnderLogs(withHeads: boolean, base = 0) {
    const client = collect();
    node.put(1, '0xa1');
    if (withHeads) await subs.subscribe(['newHeads'], client.sink);
    const logs = await subs.subscribe(['logs', {}], client.sink);
    await new Promise((r) => setTimeout(r, 50));
    node.mine(base + 2, '0xa2', ['t1']);
    node.mine(base + 3, '0xa3');
    node.mine(base + 4, '0xa4', ['t2']);
    await until(() => client.got.length === (withHeads ? 5 : 2));
    node.drop();
    node.put(base + 2, '0xb2');
    node.put(base + 3, '0xb3', ['t1']);
    node.put(base + 4, '0xb4');
    await until(() => client.got.length >= (withHeads ? 5 + 3 + 3 : 2 + 3));
    node.mine(base + 5, '0xb5', ['t3']);
    await until(() => client.got.some((g) => g.result.data === 't3'));
    await new Promise((r) => setTimeout(r, 50));
    expect(client.ended).toEqual([]);
    return client.got
      .filter((g) => g.id === logs)
      .map(
        (g) =>
          `${String(g.result.data)}@${Number(g.result.blockNumber) - base}:` +
          `${String(g.result.blockHash)}${g.result.removed === true ? ' removed' : ''}`,
      );
  }

  const qaLogs = [
    't1@2:0xa2',
    't2@4:0xa4',
    't1@2:0xa2 removed',
    't2@4:0xa4 removed',
    't1@3:0xb3',
    't3@5:0xb5',
  ];

  it('a reorg under two delivered logs: both withdrawn, the moved one sent in its new block (newHeads beside)', async () => {
    expect(await reorgUnderLogs(true)).toEqual(qaLogs);
  });

  it('the same without a newHeads subscription: the fork is found among the log blocks', async () => {
    expect(await reorgUnderLogs(false)).toEqual(qaLogs);
  });

  it('the same on a logs subscription older than the log cap: read from the reorg window, not its start', async () => {
    // QA OO: made at block 1, its logs 10,050 blocks later; every known block replaced. The read
    // started at the subscription's start (10,052 blocks, above the cap): the clients were ended.
    expect(await reorgUnderLogs(false, 10_048)).toEqual(qaLogs);
  });

  it('a replaced block whose logs were forgotten (bytes cap) cannot be withdrawn: the clients resync', async () => {
    const client = collect();
    node.put(1, '0xa1');
    const logs = await subs.subscribe(['logs', {}], client.sink);
    await new Promise((r) => setTimeout(r, 50));
    const big = (c: string) => c.repeat(MAX_REMEMBERED_LOG_BYTES * 0.6);
    node.mine(2, '0xa2', [big('a')]);
    node.mine(3, '0xa3', [big('b')]);
    await until(() => client.got.length === 2);
    node.drop();
    node.put(2, '0xb2');
    node.put(3, '0xb3');
    await until(() => client.ended.length === 1);
    expect(client.ended).toEqual([[logs, 2]]);
    expect(client.got).toHaveLength(2);
  });

  /**
   * Network P's reorg window is 256 blocks (REORG_WINDOW_BLOCKS): a logs subscription there
   * remembers its logs that deep. t1 in block 2 and t2 in 202 delivered, then a 201-block reorg
   * in the gap (2–202 replaced, t1 in 3): both withdrawn. The old code remembered 128 blocks on
   * every network, forgot block 2 when t2 came and never withdrew t1 from it.
   */
  it("on P a reorg within P's 256-block window withdraws a log older than 128 blocks", async () => {
    const upstream = { index: 0, healthy: true, spec: { wsUrl: node.url } };
    const pool = {
      upstreams: [upstream],
      pick: (tried: ReadonlySet<number>) => (tried.has(0) ? undefined : upstream),
    } as unknown as UpstreamPool;
    const onP = new NetworkSubscriptions(
      'polygon-mainnet',
      pool,
      new GatewayMetrics(new Registry()),
      pino({ level: 'silent' }),
    );
    try {
      expect(logMemoryBlocks('polygon-mainnet')).toBe(256);
      const client = collect();
      node.put(1, '0xa1');
      const logs = await onP.subscribe(['logs', {}], client.sink);
      await new Promise((r) => setTimeout(r, 50));
      node.mine(2, '0xa2', ['t1']);
      for (let n = 3; n < 202; n++) node.put(n, `0xa${n}`);
      node.mine(202, '0xa202', ['t2']);
      await until(() => client.got.length === 2);
      node.drop();
      for (let n = 2; n <= 202; n++) node.put(n, `0xb${n}`, n === 3 ? ['t1'] : []);
      await until(() => client.got.length >= 2 + 3);
      await new Promise((r) => setTimeout(r, 50));
      expect(
        client.got
          .filter((g) => g.id === logs)
          .map(
            (g) =>
              `${String(g.result.data)}@${Number(g.result.blockNumber)}` +
              (g.result.removed === true ? ' removed' : ''),
          ),
      ).toEqual(['t1@2', 't2@202', 't1@2 removed', 't2@202 removed', 't1@3']);
      expect(client.ended).toEqual([]);
    } finally {
      onP.close();
    }
  });

  it('above the cap, tells every client to resync instead of filling, and goes on from the head', async () => {
    const client = collect();
    node.put(1, '0xa1');
    const heads = await subs.subscribe(['newHeads'], client.sink);
    node.mine(2, '0xa2');
    await until(() => client.got.length === 1);
    node.drop();
    for (let n = 3; n <= 3 + MAX_BACKFILL_BLOCKS; n++) node.put(n, `0xa${n}`);
    await until(() => client.ended.length === 1);
    expect(client.ended[0]![0]).toBe(heads);
    expect(client.ended[0]![1]).toBe(MAX_BACKFILL_BLOCKS);
    // What the WebSocket edge sends before it closes the session with 1012.
    expect(subscriptionGap(heads, MAX_BACKFILL_BLOCKS).message).toBe(
      `server error: subscription ${heads} missed more than 128 blocks while its upstream node ` +
        'was away; subscribe again and resync',
    );
    node.mine(4 + MAX_BACKFILL_BLOCKS, '0xlast');
    await until(() => client.got.length === 2);
    expect(Number(client.got[1]!.result.number)).toBe(4 + MAX_BACKFILL_BLOCKS);
  });
});

/**
 * QA: a node whose WebSocket went silent (blackholed: no close, no data) kept the hub; the
 * client got nothing for 36 s and then a gap (252 → 288). A silent socket now takes the path of
 * a dropped one: given up, resubscribed on the other node, the gap filled (ADR 0203 amendment
 * "silent upstream"). The clock is the test's; nothing waits for a rule's real duration.
 */
describe('NetworkSubscriptions: a silent upstream socket is given up and the gap filled', () => {
  let a: Awaited<ReturnType<typeof scriptedNode>>;
  let b: Awaited<ReturnType<typeof scriptedNode>>;
  let subs: NetworkSubscriptions;
  let now: number;
  let registry: Registry;
  type Stub = { index: number; healthy: boolean; label: string; spec: { wsUrl: string } };
  let pool: { upstreams: Stub[]; headHeight: number | undefined };
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 300 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(done()).toBe(true);
  };

  beforeEach(async () => {
    const chain = new Map<number, string>();
    const logs = new Map<number, string[]>();
    [a, b] = await Promise.all([scriptedNode(chain, logs), scriptedNode(chain, logs)]);
    const upstreams: Stub[] = [a, b].map((node, index) => ({
      index,
      healthy: true,
      label: `${index}:node-${index}`,
      spec: { wsUrl: node.url },
    }));
    pool = { upstreams, headHeight: undefined };
    const fake = {
      get upstreams() {
        return pool.upstreams;
      },
      get headHeight() {
        return pool.headHeight;
      },
      pick: (tried: ReadonlySet<number>) =>
        pool.upstreams.find((u) => !tried.has(u.index) && u.healthy) ??
        pool.upstreams.find((u) => !tried.has(u.index)),
    } as unknown as UpstreamPool;
    now = 1_000_000;
    registry = new Registry();
    subs = new NetworkSubscriptions(
      'eth-mainnet',
      fake,
      new GatewayMetrics(registry),
      pino({ level: 'silent' }),
      { now: () => now, checkIntervalMs: 0, pongTimeoutMs: 10_000 },
    );
  });

  afterEach(() => {
    subs.close();
    a.close();
    b.close();
  });

  /** Subscribes newHeads on node a, which notifies 2 and 3, then goes silent; 4–6 are mined. */
  async function stallOnA() {
    const got: number[] = [];
    a.put(1, '0xa1');
    await subs.subscribe(['newHeads'], {
      notify: (_id, text) => got.push(Number((JSON.parse(text) as { number: string }).number)) > 0,
    });
    await new Promise((r) => setTimeout(r, 30));
    a.mine(2, '0xa2');
    a.mine(3, '0xa3');
    await until(() => got.length === 2);
    a.blackhole();
    a.put(4, '0xa4');
    a.put(5, '0xa5');
    a.put(6, '0xa6');
    return got;
  }

  const metric = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels, v.value]);

  it('its node turned unhealthy while another is healthy: resubscribed on the other, 4–6 filled once', async () => {
    const got = await stallOnA();
    expect(subs.checkLiveness()).toBeUndefined();
    expect(await metric('rpc_gateway_subscription_upstream')).toEqual([
      [{ network: 'eth-mainnet', upstream: '0:node-0' }, 1],
    ]);
    pool.upstreams[0]!.healthy = false;
    expect(subs.checkLiveness()).toBe('unhealthy');
    await until(() => got.length === 5);
    b.mine(7, '0xa7');
    await until(() => got.length === 6);
    expect(got).toEqual([2, 3, 4, 5, 6, 7]);
    expect(await metric('rpc_gateway_subscription_upstream')).toEqual([
      [{ network: 'eth-mainnet', upstream: '1:node-1' }, 1],
    ]);
    expect(await metric('rpc_gateway_subscription_upstream_abandoned_total')).toEqual([
      [{ network: 'eth-mainnet', reason: 'unhealthy' }, 1],
    ]);
  });

  it('an unhealthy node is kept when no other is healthy (moving would not help; the ping decides)', async () => {
    await stallOnA();
    for (const u of pool.upstreams) u.healthy = false;
    expect(subs.checkLiveness()).toBeUndefined();
  });

  it("the pool's head passed the last notified head by more than E's margin (2 blocks)", async () => {
    const got = await stallOnA();
    expect(headLagMargin('eth-mainnet')).toBe(2);
    expect(headLagMargin('polygon-mainnet')).toBe(10);
    expect(headLagMargin('opbnb-mainnet')).toBe(20);
    pool.headHeight = 5;
    expect(subs.checkLiveness()).toBeUndefined();
    pool.headHeight = 6;
    expect(subs.checkLiveness()).toBe('behind_pool_head');
    await until(() => got.length === 5);
    expect(got).toEqual([2, 3, 4, 5, 6]);
  });

  it('a newHeads subscription made long after the last one ended is not taken as behind', async () => {
    const got: number[] = [];
    const sink = {
      notify: (_id: string, text: string) =>
        got.push(Number((JSON.parse(text) as { number: string }).number)) > 0,
    };
    a.put(1, '0xa1');
    const first = await subs.subscribe(['newHeads'], sink);
    await new Promise((r) => setTimeout(r, 30));
    a.mine(2, '0xa2');
    await until(() => got.length === 1);
    subs.unsubscribe(first);
    for (let n = 3; n <= 50; n++) a.put(n, `0xa${n}`);
    pool.headHeight = 50;
    await subs.subscribe(['newHeads'], sink);
    // Its start (the node's head, 50) is what it has notified so far: in step with the pool.
    await new Promise((r) => setTimeout(r, 50));
    expect(subs.checkLiveness()).toBeUndefined();
    pool.headHeight = 53;
    expect(subs.checkLiveness()).toBe('behind_pool_head');
  });

  it('a ping unanswered for pongTimeoutMs; the notification age shows the stall meanwhile', async () => {
    const got = await stallOnA();
    expect(subs.checkLiveness()).toBeUndefined(); // pings
    now += 9_999;
    expect(subs.checkLiveness()).toBeUndefined();
    expect(await metric('rpc_gateway_subscription_last_notification_age_seconds')).toEqual([
      [{ network: 'eth-mainnet' }, 9.999],
    ]);
    now += 1;
    expect(subs.checkLiveness()).toBe('ping_unanswered');
    await until(() => got.length === 5);
    expect(got).toEqual([2, 3, 4, 5, 6]);
    expect(await metric('rpc_gateway_subscription_last_notification_age_seconds')).toEqual([
      [{ network: 'eth-mainnet' }, 0],
    ]);
  });

  it('a node that answers its pings keeps the socket however quiet it is', async () => {
    const got: string[] = [];
    a.put(1, '0xa1');
    await subs.subscribe(['newHeads'], { notify: (_id, text) => got.push(text) > 0 });
    for (let round = 0; round < 3; round++) {
      expect(subs.checkLiveness()).toBeUndefined();
      await new Promise((r) => setTimeout(r, 30)); // the pong's round trip
      now += 60_000;
    }
    expect(subs.checkLiveness()).toBeUndefined();
    expect(b.connections()).toBe(0);
  });
});
