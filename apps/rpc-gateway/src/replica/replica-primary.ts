import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import type { NetworkKey } from '@meridian/networks';
import { createMetricsRegistry } from '@meridian/platform-observability';
import type { AppConfig } from '../config/config';
import { RateLimiter } from '../limits/token-bucket';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { randomFilterIdKey } from '../upstreams/filter-id';
import { HealthChecker } from '../upstreams/health-checker';
import { poolsFromConfig } from '../upstreams/pools-from-config';
import {
  hubLiveness,
  SubscriptionHub,
  UpstreamSubscribeError,
} from '../websocket/subscription-hub';
import {
  isReplicaMessage,
  REPLICA_NS,
  type PrimaryMessage,
  type ReplicaRequests,
  type WorkerMessage,
} from './replica-messages';

/** A worker that dies is replaced after this long (no tight crash loop). */
const RESTART_DELAY_MS = 1_000;
/** Workers get this long to finish in-flight calls and flush usage before they are killed. */
const SHUTDOWN_GRACE_MS = 30_000;
const METRICS_COLLECT_TIMEOUT_MS = 2_000;

/**
 * prom-client omits process_start_time_seconds from an aggregate; the replica reports the newest
 * start among its processes instead, so a restart of the pod or of a worker shows in it
 * (MeridianAppRestarting: changes() of it, deploy/monitoring/alerts.yaml).
 */
function withNewestStart(part: unknown[]): unknown[] {
  for (const metric of part as { name?: string; aggregator?: string }[])
    if (metric.name === 'process_start_time_seconds') metric.aggregator = 'max';
  return part;
}

interface WorkerState {
  readonly worker: Worker;
  /** Upstream-hub subscription ids this worker holds, with their network. */
  readonly subscriptions: Map<string, NetworkKey>;
  /** Subscription reservations per account this worker holds. */
  readonly reservations: Map<string, number>;
}

/**
 * The primary process of a replica with GATEWAY_WORKERS > 1 (ADR 0204). It serves no traffic:
 * node:cluster hands the listening sockets' connections to the workers. It keeps what must be one
 * per replica: the plan-RPS token buckets (workers lease tokens), the upstream subscriptions and
 * the per-account subscription counts (workers fan notifications out to their clients), and the
 * view of the replica's metrics (every worker's registry and its own, aggregated). It restarts a
 * worker that dies, and on SIGTERM stops the workers (each flushes its usage) before it exits.
 */
export function runReplicaPrimary(config: AppConfig, logger: Logger, workers: number): void {
  const registry = createMetricsRegistry('rpc-gateway');
  const metrics = new GatewayMetrics(registry);
  const pools = poolsFromConfig(config);
  const health = new HealthChecker([...pools.values()], metrics, logger, {
    intervalMs: config.HEALTH_INTERVAL_MS,
    timeoutMs: config.HEALTH_TIMEOUT_MS,
  });
  const hub = new SubscriptionHub(pools, metrics, logger, hubLiveness(config));
  const buckets = new RateLimiter(Date.now);
  const states = new Map<number, WorkerState>();
  const collecting = new Map<number, { parts: unknown[][]; waiting: number; done(): void }>();
  let nextRid = 1;
  let stopping = false;

  health.start();
  setInterval(() => buckets.sweep(), 10_000).unref();

  const send = (worker: Worker, message: PrimaryMessage) => {
    if (worker.isConnected()) worker.send(message);
  };
  const reply = (worker: Worker, rid: number, answer: unknown) =>
    send(worker, { ns: REPLICA_NS, kind: 'reply', rid, answer });

  const handlers: {
    [K in keyof ReplicaRequests]: (
      state: WorkerState,
      body: ReplicaRequests[K]['request'],
    ) => Promise<ReplicaRequests[K]['answer']> | ReplicaRequests[K]['answer'];
  } = {
    lease: (_state, r) =>
      buckets.lease(r.accountId, r.needed, r.wanted, r.returned, r.ratePerSecond),
    reserve: (state, { accountId, limit }) => {
      if (!hub.reserve(accountId, limit)) return false;
      state.reservations.set(accountId, (state.reservations.get(accountId) ?? 0) + 1);
      return true;
    },
    subscribe: async (state, { network, params }) => {
      const subs = hub.of(network);
      if (subs === undefined) return { ok: false, refused: null };
      try {
        const id = await subs.subscribe(params, {
          notify: (subscriptionId, result) => {
            if (!state.worker.isConnected()) return false;
            send(state.worker, { ns: REPLICA_NS, kind: 'notify', id: subscriptionId, result });
            return true;
          },
          end: (subscriptionId, missedAbove) =>
            send(state.worker, { ns: REPLICA_NS, kind: 'end', id: subscriptionId, missedAbove }),
        });
        state.subscriptions.set(id, network);
        return { ok: true, id };
      } catch (error) {
        return {
          ok: false,
          refused: error instanceof UpstreamSubscribeError ? error.message : null,
        };
      }
    },
    metrics: () => replicaMetrics(),
  };

  const replicaMetrics = async (): Promise<string> => {
    const rid = nextRid++;
    const live = [...states.values()].filter((s) => s.worker.isConnected());
    const parts = await new Promise<unknown[][]>((resolve) => {
      const entry = { parts: [] as unknown[][], waiting: live.length, done: (): void => undefined };
      const timer = setTimeout(() => finish(), METRICS_COLLECT_TIMEOUT_MS);
      const finish = () => {
        clearTimeout(timer);
        collecting.delete(rid);
        resolve(entry.parts);
      };
      entry.done = finish;
      collecting.set(rid, entry);
      if (live.length === 0) finish();
      for (const s of live) send(s.worker, { ns: REPLICA_NS, kind: 'collect-metrics', rid });
    });
    parts.push(await registry.getMetricsAsJSON());
    return AggregatorRegistry.aggregate(parts.map(withNewestStart)).metrics();
  };

  const onMessage = (state: WorkerState, message: WorkerMessage) => {
    switch (message.kind) {
      case 'request': {
        const handler = handlers[message.type] as (s: WorkerState, b: unknown) => unknown;
        void Promise.resolve()
          .then(() => handler(state, message.body))
          .then(
            (answer) => reply(state.worker, message.rid, answer),
            (error: unknown) => {
              logger.error({ err: error, type: message.type }, 'replica request failed');
              reply(state.worker, message.rid, undefined);
            },
          );
        return;
      }
      case 'release': {
        const held = state.reservations.get(message.accountId) ?? 0;
        if (held === 0) return;
        if (held === 1) state.reservations.delete(message.accountId);
        else state.reservations.set(message.accountId, held - 1);
        hub.release(message.accountId);
        return;
      }
      case 'unsubscribe':
        unsubscribe(state, message.id);
        return;
      case 'metrics-json': {
        const entry = collecting.get(message.rid);
        if (entry === undefined) return;
        entry.parts.push(message.metrics);
        if (--entry.waiting === 0) entry.done();
        return;
      }
    }
  };

  const unsubscribe = (state: WorkerState, id: string) => {
    const network = state.subscriptions.get(id);
    if (network === undefined) return;
    state.subscriptions.delete(id);
    hub.of(network)?.unsubscribe(id);
  };

  // Every worker seals filter ids with one key (a filter made on one is read on another): the
  // configured one, else one made here for this replica's life.
  const filterIdKey = config.FILTER_ID_KEY ?? randomFilterIdKey(logger);
  const fork = () => {
    const worker = cluster.fork({ FILTER_ID_KEY: filterIdKey });
    const state: WorkerState = { worker, subscriptions: new Map(), reservations: new Map() };
    states.set(worker.id, state);
    worker.on('message', (message: unknown) => {
      if (isReplicaMessage<WorkerMessage>(message)) onMessage(state, message);
    });
    worker.on('exit', (code, signal) => {
      states.delete(worker.id);
      // What the dead worker held is released; its clients are gone with it.
      for (const id of [...state.subscriptions.keys()]) unsubscribe(state, id);
      for (const [accountId, count] of state.reservations)
        for (let i = 0; i < count; i++) hub.release(accountId);
      if (stopping) {
        if (states.size === 0) finish();
        return;
      }
      logger.error(
        { worker: worker.process.pid, code, signal },
        'gateway worker died; replacing it',
      );
      // Not unref'd: with every worker gone this timer is all that keeps the primary alive, and
      // an unref'd one let the replica exit when its workers died together.
      setTimeout(fork, RESTART_DELAY_MS);
    });
  };

  const finish = () => {
    health.stop();
    hub.close();
    void Promise.all([...pools.values()].map((p) => p.close())).finally(() => process.exit(0));
  };

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: states.size }, 'stopping gateway workers');
    if (states.size === 0) return finish();
    for (const { worker } of states.values()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const { worker } of states.values()) worker.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < workers; i++) fork();
  logger.info({ workers }, 'rpc-gateway replica primary started');
}
