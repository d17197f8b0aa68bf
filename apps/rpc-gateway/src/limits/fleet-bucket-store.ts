import type { ConnectionOptions } from 'node:tls';
import { Redis } from 'ioredis';
import { fileReadEachTime } from '@meridian/platform-config';
import { TAKE_UP_TO_LUA } from '@meridian/rate-limits';
import type { LeaseAnswer, LeaseRequest } from './leased-rate-limiter';
import { planLimit } from './token-bucket';

export interface FleetBucketStoreOptions {
  url: string;
  /** Prepended to every bucket key (one Redis may serve several deployments or tests). */
  keyPrefix: string;
  /**
   * A lease the store has not answered in this time fails (the caller falls back), while the
   * store is degraded: it missed a deadline and has not met one since.
   */
  commandTimeoutMs: number;
  /**
   * The deadline while the store is healthy (default: `commandTimeoutMs`). Longer, so a
   * moment's slowness is waited out instead of answered from the process's own bucket, which
   * would admit on top of the fleet's (ADR 0102, "Patience").
   */
  patienceMs?: number;
  /** TLS files for a `rediss://` URL (RATE_LIMIT_REDIS_TLS_*); none: the system's CAs. */
  tls?: RedisTlsFiles;
}

/** A private CA, and a client certificate when Redis verifies clients (`tls-auth-clients`). */
export interface RedisTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/**
 * ioredis's `tls` option from the files (checked at start by the config: PEM of the right kind,
 * the key that of the certificate, a `rediss://` URL): undefined when none is set, so a
 * `rediss://` URL alone verifies against the system's CAs. The files are read here, so a missing
 * one fails at start, and again at each connection: ioredis copies its `tls` option into every
 * connection's options (`Object.assign`), which calls these getters, so a renewed certificate is
 * used from the next reconnect without a restart; an open connection keeps its own (ADR 0506;
 * `fileReadEachTime`: a read that fails keeps the last one). The name checked is the URL's host,
 * as for any TLS client.
 */
export function redisTlsOptions(files: RedisTlsFiles | undefined): ConnectionOptions | undefined {
  if (!files?.caFile && !files?.certFile) return undefined;
  const options: ConnectionOptions = {};
  const paths = { ca: files.caFile, cert: files.certFile, key: files.keyFile };
  for (const [name, file] of Object.entries(paths))
    if (file)
      Object.defineProperty(options, name, { enumerable: true, get: fileReadEachTime(file) });
  return options;
}

/**
 * The store did not answer within `commandTimeoutMs`. The command may still run: `late` settles
 * with its answer if one comes (ADR 0102: a late lease is settled against the fallback's), and
 * is always handled, so leaving it unread is safe.
 */
export class StoreTimeoutError<T = unknown> extends Error {
  constructor(
    ms: number,
    readonly late: Promise<T>,
  ) {
    super(`rate-limit store did not answer within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

const namesTls = (message: string) => /certificate|SSL|TLS/i.test(message);

/** How much longer than the lease deadline ioredis keeps an unanswered command (a hung server). */
const ABANDON_AFTER_DEADLINES = 10;

/**
 * `work` if it settles within `ms`, else a StoreTimeoutError. The deadline is judged after the
 * process has read what its sockets hold: when the process was stalled past the deadline
 * (descheduled on a loaded host, a long GC), the timers phase runs before the poll phase of the
 * same loop turn, so a plain timer fires although the answer is already in the socket, and a
 * lease the store granted would be thrown away for the fallback's (ADR 0102: a bucket of this
 * process, on top of the fleet's). One `setImmediate` runs after that poll phase.
 */
export function settleWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (!settled) {
            settled = true;
            reject(new StoreTimeoutError(ms, work));
          }
        }),
      ms,
    );
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
 * Commands fail fast while Redis is unreachable (no offline queue, a short deadline judged after
 * the process read its sockets) so the caller's fallback answers instead of a call waiting; the
 * client reconnects on its own. A healthy store is given `patienceMs` before a lease fails, a
 * degraded one (it missed that deadline, and has met none since) `commandTimeoutMs`: a moment's
 * slowness is waited out once, a store that stays slow costs each lease the short deadline.
 */
export class FleetBucketStore {
  private readonly redis: Redis;
  private readonly patienceMs: number;
  /** Missed a deadline and met none since: leases get `commandTimeoutMs`, not the patience. */
  private degraded = false;
  /**
   * Why the store is not connected: the first connection error since it last was (a refused
   * certificate, a refused connection), not what followed from it (commands refused).
   */
  connectionError: string | undefined;

  constructor(private readonly options: FleetBucketStoreOptions) {
    this.patienceMs = Math.max(options.patienceMs ?? 0, options.commandTimeoutMs);
    this.redis = new Redis(options.url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // The lease deadline is `settleWithin`'s; this only frees commands a hung server never
      // answers.
      commandTimeout: this.patienceMs * ABANDON_AFTER_DEADLINES,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      // Closing a store that never connected: a stream left half open is dropped soon.
      disconnectTimeout: 200,
      tls: redisTlsOptions(options.tls),
    });
    // Connection errors surface as failed commands (and the fallback); nothing to crash on. The
    // first is kept for the log that says the store is unreachable, or a later one naming TLS
    // (a refused client certificate may show first as a reset: TLS 1.3 reports it after the
    // handshake). A command refused while not connected is a consequence, not the cause.
    this.redis.on('error', (error: Error) => {
      if (/enableOfflineQueue/.test(error.message)) return;
      if (!this.connectionError || (!namesTls(this.connectionError) && namesTls(error.message)))
        this.connectionError = error.message;
    });
    this.redis.on('ready', () => (this.connectionError = undefined));
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
        () =>
          reject(
            new Error(
              `rate-limit store not reachable${this.connectionError ? `: ${this.connectionError}` : ''}`,
            ),
          ),
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
    return this.takeUpTo(request.accountId, request, limit.ratePerSecond, limit.burst, nowMs);
  }

  /**
   * One `takeUpTo` on the bucket `key` (after the prefix) of `ratePerSecond` and `burst`: the
   * plan-RPS leases, and the spend pools of balance states (a bucket of rate 0 seeded with the
   * state's spendable CU, ADR 0201 amendment "The estimate across the fleet"). The deadline and
   * the patience are the store's, whichever bucket it is.
   */
  async takeUpTo(
    key: string,
    take: Pick<LeaseRequest, 'needed' | 'wanted' | 'returned'>,
    ratePerSecond: number,
    burst: number,
    nowMs: number,
  ): Promise<LeaseAnswer> {
    const command = (this.redis as unknown as { meridianTakeUpTo: LeaseCommand }).meridianTakeUpTo;
    const answer = command
      .call(
        this.redis,
        `${this.options.keyPrefix}${key}`,
        take.needed,
        take.wanted,
        take.returned,
        ratePerSecond,
        burst,
        nowMs,
      )
      .then(([ok, value]): LeaseAnswer =>
        ok === 1
          ? { ok: true, granted: value }
          : { ok: false, retryAfterMs: value < 0 ? Number.MAX_SAFE_INTEGER : value },
      );
    try {
      const answered = await settleWithin(
        answer,
        this.degraded ? this.options.commandTimeoutMs : this.patienceMs,
      );
      this.degraded = false;
      return answered;
    } catch (error) {
      if (error instanceof StoreTimeoutError) this.degraded = true;
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.connected) await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
