import { Redis } from 'ioredis';
import { TAKE_UP_TO_LUA } from '@meridian/rate-limits';
import type { LeaseAnswer, LeaseRequest } from './leased-rate-limiter';
import { planLimit } from './token-bucket';

export interface FleetBucketStoreOptions {
  url: string;
  /** Prepended to every bucket key (one Redis may serve several deployments or tests). */
  keyPrefix: string;
  /** A lease the store has not answered in this time fails (the caller falls back). */
  commandTimeoutMs: number;
}

type LeaseCommand = (
  key: string,
  needed: number,
  wanted: number,
  returned: number,
  rate: number,
  burst: number,
  nowMs: number,
) => Promise<[number, number]>;

/**
 * The plan-RPS buckets every replica of the fleet shares (ADR 0102), in Redis: one bucket per
 * account, taken from by leases (`takeUpTo` run atomically as a Lua script), never per call.
 * Commands fail fast while Redis is unreachable (no offline queue, a short timeout) so the
 * caller's fallback answers instead of a call waiting; the client reconnects on its own.
 */
export class FleetBucketStore {
  private readonly redis: Redis;

  constructor(private readonly options: FleetBucketStoreOptions) {
    this.redis = new Redis(options.url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    // Connection errors surface as failed commands (and the fallback); nothing to crash on.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('meridianTakeUpTo', { numberOfKeys: 1, lua: TAKE_UP_TO_LUA });
  }

  get connected(): boolean {
    return this.redis.status === 'ready';
  }

  /** Resolves once connected (start-up, tests); leases before that come from the fallback. */
  ready(timeoutMs = 5_000): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('rate-limit store not reachable')),
        timeoutMs,
      );
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async lease(request: LeaseRequest, nowMs: number): Promise<LeaseAnswer> {
    const limit = planLimit(request.ratePerSecond);
    const command = (this.redis as unknown as { meridianTakeUpTo: LeaseCommand }).meridianTakeUpTo;
    const [ok, value] = await command.call(
      this.redis,
      `${this.options.keyPrefix}${request.accountId}`,
      request.needed,
      request.wanted,
      request.returned,
      limit.ratePerSecond,
      limit.burst,
      nowMs,
    );
    if (ok === 1) return { ok: true, granted: value };
    return { ok: false, retryAfterMs: value < 0 ? Number.MAX_SAFE_INTEGER : value };
  }

  async close(): Promise<void> {
    if (this.connected) await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
