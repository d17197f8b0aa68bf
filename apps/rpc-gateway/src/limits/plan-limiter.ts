import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { ReplicaLink } from '../replica/replica-link';
import { FleetBucketStore, type FleetBucketStoreOptions } from './fleet-bucket-store';
import { fleetLeases, type LeaseSource } from './fleet-lease';
import { LeasedRateLimiter } from './leased-rate-limiter';
import { RateLimiter, type RateLimit } from './token-bucket';

/** How long a worker may spend tokens it leased from the replica primary (ADR 0204). */
const REPLICA_LEASE_MS = 100;

export interface PlanLimiter {
  readonly limiter: RateLimit;
  /** The fleet store (RATE_LIMIT_REDIS_URL), which the spend pools share (ADR 0201). */
  readonly store?: FleetBucketStore;
  close(): Promise<void>;
}

/** The fleet store of RATE_LIMIT_REDIS_URL and its settings (TLS: RATE_LIMIT_REDIS_TLS_*). */
export function fleetStoreOptionsOf(config: AppConfig): FleetBucketStoreOptions {
  return {
    url: config.RATE_LIMIT_REDIS_URL,
    keyPrefix: config.RATE_LIMIT_KEY_PREFIX,
    commandTimeoutMs: config.RATE_LIMIT_STORE_TIMEOUT_MS,
    patienceMs: config.RATE_LIMIT_STORE_PATIENCE_MS,
    tls: {
      caFile: config.RATE_LIMIT_REDIS_TLS_CA_FILE,
      certFile: config.RATE_LIMIT_REDIS_TLS_CERT_FILE,
      keyFile: config.RATE_LIMIT_REDIS_TLS_KEY_FILE,
    },
  };
}

/**
 * The plan-RPS limiter of this process: fleet-wide from the shared store when
 * RATE_LIMIT_REDIS_URL is set (ADR 0102: every process leases from Redis, and falls back to a
 * bucket of its own while Redis is unreachable), else one bucket per replica (ADR 0204: in this
 * process, or leased from the primary). Calls are answered from local credit; leases are
 * refilled ahead of need, so no call waits on the network while its account has traffic.
 */
export function createPlanLimiter(
  config: AppConfig,
  replica: ReplicaLink | null,
  registry: Registry,
  logger: Logger,
): PlanLimiter {
  if (config.RATE_LIMIT_REDIS_URL) {
    const store = new FleetBucketStore(fleetStoreOptionsOf(config));
    const local = new RateLimiter(Date.now);
    const up = new Gauge({
      name: 'rate_limit_store_up',
      help: '1 while plan-RPS leases come from the fleet store, 0 while from this process alone',
      registers: [registry],
    });
    const leases = new Counter({
      name: 'rate_limit_leases_total',
      help: 'Plan-RPS leases taken, by source (fleet store or this process while it is down)',
      labelNames: ['source'],
      registers: [registry],
    });
    up.set(1);
    let last: LeaseSource = 'fleet';
    const onLease = (source: LeaseSource) => {
      leases.inc({ source });
      if (source === last) return;
      last = source;
      up.set(source === 'fleet' ? 1 : 0);
      if (source === 'local')
        logger.warn(
          // The store by scheme and host only: the URL may hold a password.
          { reason: store.connectionError, store: redisOrigin(config.RATE_LIMIT_REDIS_URL) },
          'rate-limit store unreachable: enforcing plan RPS per process until it is back',
        );
      else logger.info('rate-limit store reachable again: plan RPS is fleet-wide');
    };
    const limiter = new LeasedRateLimiter(Date.now, fleetLeases(store, local, Date.now, onLease), {
      leaseMs: config.RATE_LIMIT_LEASE_MS,
    });
    const timer = setInterval(() => {
      limiter.sweep();
      local.sweep();
    }, config.RATE_LIMIT_LEASE_MS);
    timer.unref();
    return {
      limiter,
      store,
      close: async () => {
        clearInterval(timer);
        await store.close();
      },
    };
  }
  const limiter = replica
    ? new LeasedRateLimiter(Date.now, (request) => replica.request('lease', request), {
        leaseMs: REPLICA_LEASE_MS,
      })
    : new RateLimiter(Date.now);
  const timer = setInterval(() => limiter.sweep(), replica ? REPLICA_LEASE_MS : 10_000);
  timer.unref();
  return { limiter, close: () => Promise.resolve(clearInterval(timer)) };
}

/** `redis[s]://host:port` of a RATE_LIMIT_REDIS_URL (checked at start), without credentials. */
function redisOrigin(value: string): string {
  const url = new URL(value);
  return `${url.protocol}//${url.host}`;
}
