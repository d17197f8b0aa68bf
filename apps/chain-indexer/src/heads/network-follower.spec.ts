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
