import {
  capacityOf,
  fullBucket,
  take,
  takeUpTo,
  type Bucket,
  type BucketLimit,
  type LeaseResult,
  type TakeResult,
} from './token-bucket';

/**
 * Token buckets keyed by account (or any key), read against an injected clock. Buckets that
 * refilled to full are forgotten by `sweep`, so memory follows the active keys only.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { bucket: Bucket; limit: BucketLimit }>();

  constructor(private readonly now: () => number) {}

  take(key: string, cost: number, limit: BucketLimit): TakeResult {
    return take(this.bucket(key, limit), cost, limit, this.now());
  }

  /** Tokens for another holder to spend (see `takeUpTo`). */
  lease(
    key: string,
    needed: number,
    wanted: number,
    returned: number,
    limit: BucketLimit,
  ): LeaseResult {
    return takeUpTo(this.bucket(key, limit), needed, wanted, returned, limit, this.now());
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Forgets buckets idle long enough to be full again (a new one starts full: same answer). */
  sweep(): void {
    const nowMs = this.now();
    for (const [key, { bucket, limit }] of this.buckets) {
      const refillMs =
        limit.ratePerSecond > 0
          ? ((capacityOf(limit) - bucket.tokens) * 1000) / limit.ratePerSecond
          : Number.POSITIVE_INFINITY;
      if (nowMs - bucket.updatedMs >= refillMs) this.buckets.delete(key);
    }
  }

  private bucket(key: string, limit: BucketLimit): Bucket {
    const entry = this.buckets.get(key);
    if (entry !== undefined) {
      entry.limit = limit;
      return entry.bucket;
    }
    const bucket = fullBucket(limit, this.now());
    this.buckets.set(key, { bucket, limit });
    return bucket;
  }
}
