import { fullBucket, take, type Bucket, type BucketLimit } from '@meridian/rate-limits';

/** COMPAT "Protection": at most 10 attempts in flight per endpoint URL, 200 requests/s per host. */
export interface EndpointLimitSettings {
  inFlightPerUrl: number;
  hostRate: BucketLimit;
}

export const COMPAT_ENDPOINT_LIMITS: EndpointLimitSettings = Object.freeze({
  inFlightPerUrl: 10,
  hostRate: Object.freeze({ ratePerSecond: 200, burst: 200 }),
});

export type Admission = { ok: true; release: () => void } | { ok: false; retryAfterMs: number };

/** How long a job waits before asking again when its endpoint is at its in-flight cap. */
const BUSY_RETRY_MS = 250;

/**
 * The per-replica gate in front of every send. A job that does not get in is put back (not an
 * attempt), so the consumer slot it held goes to another customer's job at once: a slow
 * endpoint holds at most its 10 slots, never the worker.
 */
export class EndpointLimits {
  private readonly inFlight = new Map<string, number>();
  private readonly hosts = new Map<string, Bucket>();

  constructor(private readonly settings: EndpointLimitSettings = COMPAT_ENDPOINT_LIMITS) {}

  tryAcquire(url: string, host: string, nowMs: number): Admission {
    const busy = this.inFlight.get(url) ?? 0;
    if (busy >= this.settings.inFlightPerUrl) return { ok: false, retryAfterMs: BUSY_RETRY_MS };
    let bucket = this.hosts.get(host);
    if (bucket === undefined) {
      if (this.hosts.size > 10_000) this.pruneHosts(nowMs);
      bucket = fullBucket(this.settings.hostRate, nowMs);
      this.hosts.set(host, bucket);
    }
    const taken = take(bucket, 1, this.settings.hostRate, nowMs);
    if (!taken.ok) return { ok: false, retryAfterMs: taken.retryAfterMs };
    this.inFlight.set(url, busy + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.inFlight.get(url) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(url);
        else this.inFlight.set(url, left);
      },
    };
  }

  inFlightOf(url: string): number {
    return this.inFlight.get(url) ?? 0;
  }

  /** Buckets idle for over a second are full again; forgetting them changes nothing. */
  private pruneHosts(nowMs: number): void {
    for (const [host, bucket] of this.hosts)
      if (nowMs - bucket.updatedMs > 1_000) this.hosts.delete(host);
  }
}
