import { DomainError } from '@meridian/errors';
import { DbJobGate } from '@meridian/platform-db';
import { systemClock } from '@meridian/time';
import { Registry } from 'prom-client';
import { IndexerMetrics } from '../metrics/indexer-metrics';
import { NetworkFollower, type FollowerDeps } from './network-follower';

/**
 * A follower does not step before NATS is first connected (QA: a normal start logged "indexer
 * step failed … NATS is not connected" while the connection was still coming up). The lease
 * here answers as the real one does without a connection (NatsClient.require's error) and
 * counts its calls; the node, watcher and repository are never reached.
 */
describe('NetworkFollower before NATS is connected', () => {
  it('tries no step (no lease tick, no warning) until the connection is up', async () => {
    let connected = false;
    let ticks = 0;
    const warnings: string[] = [];
    let markConnected!: () => void;
    const natsConnected = new Promise<void>((resolve) => (markConnected = resolve));
    const follower = new NetworkFollower({
      network: 'eth-mainnet',
      node: {},
      watcher: { start: () => undefined, stop: () => undefined },
      lease: {
        token: () => undefined,
        renewDue: () => true,
        tick: async () => {
          ticks += 1;
          if (!connected)
            throw new DomainError('messaging_unavailable', 'unavailable', 'NATS is not connected');
          return undefined; // another replica leads
        },
        release: async () => undefined,
      },
      repository: {},
      publish: async () => undefined,
      clock: systemClock,
      metrics: new IndexerMetrics(new Registry()),
      logger: { warn: (_o: object, msg: string) => warnings.push(msg), info: () => undefined },
      options: {
        windowBlocks: 10,
        historyBlocks: 20,
        maxMessageBytes: 1_000_000,
        backfillBlocksPerSecond: 10,
        startBlocksBehind: 0,
        deepReorgPolicy: 'resync',
        // Far beyond the test: only the first step can run (5 ms let a loaded machine's turn
        // see a second one, a flake in CI).
        leaseCheckMs: 60_000,
        errorBackoffMs: 60_000,
      },
      natsConnected,
    } as unknown as FollowerDeps);

    // A follower's first step runs within the turn it starts in (no timer before it).
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    follower.start();
    await turn();
    expect(ticks).toBe(0);
    expect(warnings).toEqual([]);

    connected = true;
    markConnected();
    await turn();
    expect(ticks).toBe(1);
    expect(warnings).toEqual([]);
    await follower.stop();
  });

  it('stop() ends the wait when NATS never came', async () => {
    const follower = new NetworkFollower({
      network: 'eth-mainnet',
      watcher: { start: () => undefined, stop: () => undefined },
      lease: { release: async () => undefined },
      metrics: new IndexerMetrics(new Registry()),
      options: { backfillBlocksPerSecond: 1 },
      natsConnected: new Promise(() => undefined),
    } as unknown as FollowerDeps);
    follower.start();
    await expect(follower.stop()).resolves.toBeUndefined();
  });
});

describe('NetworkFollower while Postgres is out of reach (QA: 547 "indexer step failed" in 3 min)', () => {
  it('reports the outage to the gate (one line), no warning per step, and steps again when it answers', async () => {
    jest.useFakeTimers();
    const postgres = { up: false };
    const refused = () =>
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const dataSource = {
      isInitialized: true,
      query: async () => {
        if (!postgres.up) throw refused();
        return [];
      },
    };
    const outage = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log: outage, probeBackoffMs: [20] });
    let ticks = 0;
    const warnings: string[] = [];
    const follower = new NetworkFollower({
      network: 'eth-mainnet',
      node: {},
      watcher: { start: () => undefined, stop: () => undefined },
      lease: {
        token: () => undefined,
        renewDue: () => true,
        // The step's first query meets the stopped Postgres.
        tick: async () => {
          ticks += 1;
          if (!postgres.up) throw refused();
          return undefined;
        },
        release: async () => undefined,
      },
      repository: {},
      publish: async () => undefined,
      clock: systemClock,
      metrics: new IndexerMetrics(new Registry()),
      logger: { warn: (_o: object, msg: string) => warnings.push(msg), info: () => undefined },
      options: {
        windowBlocks: 10,
        historyBlocks: 20,
        maxMessageBytes: 1_000_000,
        backfillBlocksPerSecond: 10,
        startBlocksBehind: 0,
        deepReorgPolicy: 'resync',
        leaseCheckMs: 5,
        errorBackoffMs: 5,
      },
      database: gate,
    } as unknown as FollowerDeps);
    follower.start();
    await jest.advanceTimersByTimeAsync(100);
    expect(warnings).toEqual([]);
    expect(outage.lost).toHaveBeenCalledTimes(1);
    expect(ticks).toBe(1);
    postgres.up = true;
    await jest.advanceTimersByTimeAsync(100);
    expect(outage.restored).toHaveBeenCalledTimes(1);
    expect(ticks).toBeGreaterThan(1);
    expect(warnings).toEqual([]);
    await follower.stop();
    gate.stop();
    jest.useRealTimers();
  });
});

/**
 * A non-retryable error stops retrying (QA: `block_item_too_large` logged with "indexer step
 * failed; retrying" about once a second for the same block, 500 times, its receipts fetched
 * each time). The node is a table of blocks; the cursor's repository keeps state in memory.
 */
describe('NetworkFollower on a block it cannot publish', () => {
  const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
  const addr = `0x${'ab'.repeat(20)}`;
  const blockOf = (number: number, hash: string, parentHash: string, extra = {}) => ({
    number: `0x${number.toString(16)}`,
    hash,
    parentHash,
    timestamp: '0x64',
    transactions: [{ hash: h(5000 + number), from: addr, to: addr, input: '0x', ...extra }],
  });

  it('halts on it (one error line, halted = 1, receipts fetched once), resumes when a reorg replaces it', async () => {
    jest.useFakeTimers();
    const chain = new Map<number, ReturnType<typeof blockOf>>([
      [10, blockOf(10, h(10), h(9))],
      // A transaction that exceeds the stream's message size even without its input.
      [11, blockOf(11, h(11), h(10), { accessList: 'x'.repeat(70_000) })],
    ]);
    const receiptFetches: string[] = [];
    const published: { hash: string; part: { index: number } }[] = [];
    const lines: { level: string; msg: string }[] = [];
    const log = (level: string) => (_o: object, msg: string) => lines.push({ level, msg });
    const metrics = new IndexerMetrics(new Registry());
    const head10 = { number: 10, hash: h(10), parentHash: h(9), timestamp: 100 };
    const follower = new NetworkFollower({
      network: 'eth-mainnet',
      node: {
        blockNumber: async () => Math.max(...chain.keys()),
        blockByNumber: async (n: number) => chain.get(n),
        receiptsOf: async (b: { hash: string; transactions: { hash: string }[] }) => {
          receiptFetches.push(b.hash);
          return b.transactions.map((t) => ({
            transactionHash: t.hash,
            blockHash: b.hash,
            logs: [],
          }));
        },
      },
      watcher: {
        start: () => undefined,
        stop: () => undefined,
        wait: (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
      },
      lease: {
        token: () => 1,
        renewDue: () => false,
        tick: async () => 1,
        release: async () => undefined,
      },
      repository: {
        claim: async () => undefined,
        load: async () => ({ head: head10, generation: 0, window: new Map([[10, head10]]) }),
        advance: async () => undefined,
      },
      publish: async (_c: unknown, part: { hash: string; part: { index: number } }) => {
        published.push(part);
      },
      clock: systemClock,
      metrics,
      logger: { warn: log('warn'), info: log('info'), error: log('error') },
      options: {
        windowBlocks: 10,
        historyBlocks: 20,
        maxMessageBytes: 64 * 1024,
        backfillBlocksPerSecond: 10,
        startBlocksBehind: 0,
        deepReorgPolicy: 'halt',
        leaseCheckMs: 5,
        errorBackoffMs: 5,
      },
    } as unknown as FollowerDeps);
    const gauge = async (metric: {
      get(): Promise<{ values: { labels: object; value: number }[] }>;
    }) => (await metric.get()).values.map((v) => ({ ...v.labels, value: v.value }));

    follower.start();
    await jest.advanceTimersByTimeAsync(200);
    expect(receiptFetches).toEqual([h(11)]);
    expect(published).toEqual([]);
    expect(lines.filter((l) => l.level !== 'info')).toEqual([
      {
        level: 'error',
        msg: 'block cannot be published: network halted on it until the node replaces it or a restart',
      },
    ]);
    expect(await gauge(metrics.halted)).toEqual([{ network: 'eth-mainnet', value: 1 }]);
    expect(await gauge(metrics.errors)).toEqual([
      { network: 'eth-mainnet', code: 'block_item_too_large', value: 1 },
    ]);

    // A reorg replaces block 11 with one that fits: publishing goes on.
    chain.set(11, blockOf(11, h(0x11b), h(10)));
    await jest.advanceTimersByTimeAsync(50);
    expect(published.map((p) => p.hash)).toEqual([h(0x11b)]);
    expect(await gauge(metrics.halted)).toEqual([{ network: 'eth-mainnet', value: 0 }]);
    const stopped = follower.stop();
    await jest.advanceTimersByTimeAsync(10); // the fake watcher's wait ends on a timer
    await stopped;
    jest.useRealTimers();
  });
});
