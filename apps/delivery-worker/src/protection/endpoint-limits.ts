import { fullBucket, take, type Bucket, type BucketLimit } from '@meridian/rate-limits';

/**
 * COMPAT "Protection": at most 10 attempts in flight per endpoint URL, 200 requests/s per host;
 * and ours: at most `inFlightPerAccount` per account (ACCOUNT_MAX_IN_FLIGHT, default 64, a
 * quarter of the consumer's 256 slots), so one account's many slow URLs cannot take every slot.
 */
export interface EndpointLimitSettings {
  inFlightPerUrl: number;
  inFlightPerAccount: number;
  hostRate: BucketLimit;
}

/** The default share of one account: a quarter of the jobs consumer's 256 slots. */
export const DEFAULT_ACCOUNT_MAX_IN_FLIGHT = 64;

export const COMPAT_ENDPOINT_LIMITS: EndpointLimitSettings = Object.freeze({
  inFlightPerUrl: 10,
  inFlightPerAccount: DEFAULT_ACCOUNT_MAX_IN_FLIGHT,
  hostRate: Object.freeze({ ratePerSecond: 200, burst: 200 }),
});

/**
 * Why a job did not get in (a wait reason): its URL at its cap or its host over its rate
 * (`endpoint_busy`), or its account at its cap (`account_busy`).
 */
export type BusyReason = 'endpoint_busy' | 'account_busy';

export type Admission =
  { ok: true; release: () => void } | { ok: false; retryAfterMs: number; reason: BusyReason };

/** How long a job waits before asking again when its endpoint is at its in-flight cap. */
const BUSY_RETRY_MS = 250;

/**
 * The per-replica gate in front of every send. A job that does not get in is put back (not an
 * attempt), so the consumer slot it held goes to another customer's job at once: a slow
 * endpoint holds at most its 10 slots, and one account (however many URLs it has) at most
 * `inFlightPerAccount`, never the worker.
 */
export class EndpointLimits {
  private readonly inFlight = new Map<string, number>();
  private readonly accounts = new Map<string, number>();
  private readonly hosts = new Map<string, Bucket>();

  constructor(private readonly settings: EndpointLimitSettings = COMPAT_ENDPOINT_LIMITS) {}

  tryAcquire(url: string, host: string, accountId: string, nowMs: number): Admission {
    const busy = this.inFlight.get(url) ?? 0;
    if (busy >= this.settings.inFlightPerUrl)
      return { ok: false, retryAfterMs: BUSY_RETRY_MS, reason: 'endpoint_busy' };
    const accountBusy = this.accounts.get(accountId) ?? 0;
    // Before the host's bucket: a job that waits for its account takes no request of the rate.
    if (accountBusy >= this.settings.inFlightPerAccount)
      return { ok: false, retryAfterMs: BUSY_RETRY_MS, reason: 'account_busy' };
    let bucket = this.hosts.get(host);
    if (bucket === undefined) {
      if (this.hosts.size > 10_000) this.pruneHosts(nowMs);
      bucket = fullBucket(this.settings.hostRate, nowMs);
      this.hosts.set(host, bucket);
    }
    const taken = take(bucket, 1, this.settings.hostRate, nowMs);
    if (!taken.ok) return { ok: false, retryAfterMs: taken.retryAfterMs, reason: 'endpoint_busy' };
    this.inFlight.set(url, busy + 1);
    this.accounts.set(accountId, accountBusy + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.inFlight.get(url) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(url);
        else this.inFlight.set(url, left);
        const accountLeft = (this.accounts.get(accountId) ?? 1) - 1;
        if (accountLeft <= 0) this.accounts.delete(accountId);
        else this.accounts.set(accountId, accountLeft);
      },
    };
  }

  inFlightOf(url: string): number {
    return this.inFlight.get(url) ?? 0;
  }

  inFlightOfAccount(accountId: string): number {
    return this.accounts.get(accountId) ?? 0;
  }

  /** Buckets idle for over a second are full again; forgetting them changes nothing. */
  private pruneHosts(nowMs: number): void {
    for (const [host, bucket] of this.hosts)
      if (nowMs - bucket.updatedMs > 1_000) this.hosts.delete(host);
  }
}
