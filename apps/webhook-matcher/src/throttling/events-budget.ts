import { TokenBuckets, type BucketLimit } from '@meridian/rate-limits';

/**
 * The account's events per second (spec "Plan limits for webhooks"): one token bucket per
 * account for all its webhooks, rate and burst (12×) from the account's plan caps. Above it the
 * event is dropped, not delayed. One event costs one token per webhook it matched: two webhooks
 * of one account watching the same address spend two.
 *
 * The bucket runs on chain time, not on the matcher's clock (ADR 0421 amendment "the budget on
 * block time"): an event is admitted at its block's timestamp, so a backlog the pipeline
 * delivers late (a matcher restart, an indexer or NATS outage) refills at the pace the chain
 * made it, and a customer under the rate on-chain loses nothing to our lag. A bucket's clock
 * never goes back (`refill` keeps the greatest time it has seen): events of one block, or of a
 * block older than one already counted, get no refill of their own.
 */
export class EventsBudget {
  /** The block time of the event being admitted: the buckets' clock (`TokenBuckets` reads it). */
  private atMs = 0;
  /** The greatest block time seen, any account: "now" for forgetting idle buckets. */
  private latestMs = 0;
  private readonly buckets = new TokenBuckets(() => this.atMs);

  /**
   * True when the event may go out; false when it is over the budget and must be dropped.
   * `blockTimestamp`: the event's block time, unix seconds (ChainBlock.timestamp).
   */
  admit(accountId: string, limit: BucketLimit, blockTimestamp: number): boolean {
    if (limit.ratePerSecond <= 0 && limit.burst <= 0) return false;
    this.atMs = blockTimestamp * 1000;
    if (this.atMs > this.latestMs) this.latestMs = this.atMs;
    return this.buckets.take(accountId, 1, limit).ok;
  }

  /**
   * Forgets accounts idle for long enough, in chain time, that their bucket would be full again.
   * A bucket of a network lagging behind another may go early: it then starts full (at most one
   * burst more than the budget), never fewer tokens than it had.
   */
  sweep(): void {
    this.atMs = this.latestMs;
    this.buckets.sweep();
  }
}
