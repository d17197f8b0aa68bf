import { tokensNeeded, tokensOwed, type RateLimit, type TakeResult } from './token-bucket';

/** A request to the replica's token buckets (held by the primary process, ADR 0204). */
export interface LeaseRequest {
  accountId: string;
  ratePerSecond: number;
  /** Tokens the call being admitted needs now. */
  needed: number;
  /** Tokens worth holding for the next calls of this account on this process. */
  wanted: number;
  /** Tokens of an expired lease that were not used (given back to the bucket). */
  returned: number;
}

export type LeaseAnswer = { ok: true; granted: number } | { ok: false; retryAfterMs: number };

export interface LeaseOptions {
  /** How long granted tokens may be spent locally before the rest goes back. */
  leaseMs: number;
}

interface Lease {
  credit: number;
  expiresMs: number;
  /** Tokens to ask for beyond the call's own need; adapts to this process's share of the traffic. */
  prefetch: number;
  ratePerSecond: number;
  /** The refill in flight, if any (one at a time per account). */
  refilling: Promise<TakeResult> | undefined;
}

/**
 * The plan RPS of an account, enforced across every process of a replica: the token buckets
 * live in the primary; each worker process spends tokens it leased from them. The replica never
 * admits more than the bucket allows (leased tokens are taken from it); the price is that tokens
 * leased by one process and not yet used are not available to another for up to `leaseMs`, so
 * the prefetch stays small: it doubles while a process spends its lease faster than it lasts and
 * halves when a lease is left mostly unused, never above one lease period of the whole rate.
 * A lease is topped up in the background when it runs low or nears its end, so under steady
 * traffic calls are admitted from local credit without waiting for any message.
 */
export class LeasedRateLimiter implements RateLimit {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly now: () => number,
    private readonly ask: (request: LeaseRequest) => Promise<LeaseAnswer>,
    private readonly options: LeaseOptions,
  ) {}

  take(accountId: string, cost: number, ratePerSecond: number): TakeResult | Promise<TakeResult> {
    const needed = tokensNeeded(cost, ratePerSecond);
    const owed = tokensOwed(cost, ratePerSecond);
    const lease = this.leases.get(accountId);
    if (lease !== undefined && this.spend(lease, needed, ratePerSecond, accountId)) {
      if (owed > 0) this.charge(accountId, owed, ratePerSecond);
      return { ok: true };
    }
    const taking = this.takeAfterRefill(accountId, needed, ratePerSecond);
    if (owed === 0) return taking;
    return taking.then((taken) => {
      if (taken.ok) this.charge(accountId, owed, ratePerSecond);
      return taken;
    });
  }

  /** Gives back what expired leases did not use (runs periodically; idle accounts are forgotten). */
  sweep(): void {
    const nowMs = this.now();
    for (const [accountId, lease] of this.leases) {
      if (lease.expiresMs > nowMs || lease.refilling !== undefined) continue;
      this.leases.delete(accountId);
      const returned = Math.floor(lease.credit);
      if (returned > 0)
        void this.ask({
          accountId,
          ratePerSecond: lease.ratePerSecond,
          needed: 0,
          wanted: 0,
          returned,
        }).catch(() => undefined);
    }
  }

  /**
   * Charges the bucket tokens a call spent beyond its grant (a batch larger than the bucket,
   * admitted on a full one): a negative return takes the bucket below empty, so every process
   * waits until the rate has repaid them (`takeUpTo`), as one process's own bucket would.
   */
  private charge(accountId: string, owed: number, ratePerSecond: number): void {
    void this.ask({ accountId, ratePerSecond, needed: 0, wanted: 0, returned: -owed }).catch(
      () => undefined,
    );
  }

  /** Spends from the lease if it covers the call, topping it up ahead of need. */
  private spend(lease: Lease, needed: number, ratePerSecond: number, accountId: string): boolean {
    const nowMs = this.now();
    if (lease.expiresMs <= nowMs || lease.credit < needed) return false;
    lease.credit -= needed;
    if (
      lease.refilling === undefined &&
      (lease.credit < lease.prefetch / 2 || lease.expiresMs - nowMs < this.options.leaseMs / 2)
    )
      void this.refill(accountId, lease, 0, ratePerSecond);
    return true;
  }

  /** A call the lease does not cover waits for a refill (only one is in flight per account). */
  private async takeAfterRefill(
    accountId: string,
    needed: number,
    ratePerSecond: number,
  ): Promise<TakeResult> {
    for (;;) {
      let lease = this.leases.get(accountId);
      if (lease === undefined) {
        lease = { credit: 0, expiresMs: 0, prefetch: 0, ratePerSecond, refilling: undefined };
        this.leases.set(accountId, lease);
      }
      if (lease.refilling === undefined) {
        if (this.spend(lease, needed, ratePerSecond, accountId)) return { ok: true };
        return this.refill(accountId, lease, needed, ratePerSecond);
      }
      await lease.refilling;
      if (this.spend(lease, needed, ratePerSecond, accountId)) return { ok: true };
    }
  }

  /** Asks the primary for `needed` tokens (0: a top-up) plus the prefetch. */
  private refill(
    accountId: string,
    lease: Lease,
    needed: number,
    ratePerSecond: number,
  ): Promise<TakeResult> {
    const nowMs = this.now();
    lease.ratePerSecond = ratePerSecond;
    const ceiling = Math.ceil((ratePerSecond * this.options.leaseMs) / 1000);
    let returned = 0;
    if (lease.expiresMs <= nowMs) {
      // An expired lease: what it did not use goes back, and this process needs less next time.
      returned = Math.floor(lease.credit);
      lease.credit = 0;
      if (returned > 0) lease.prefetch = Math.floor(lease.prefetch / 2);
    } else if (lease.credit < lease.prefetch / 2 || needed > lease.credit) {
      lease.prefetch = Math.min(ceiling, Math.max(1, lease.prefetch * 2));
    } else if (lease.credit > lease.prefetch) {
      lease.prefetch = Math.floor(lease.prefetch / 2);
    }
    const refilling = this.ask({
      accountId,
      ratePerSecond,
      needed,
      wanted: needed + lease.prefetch,
      returned,
    }).then(
      (answer): TakeResult => {
        if (!answer.ok) return answer;
        lease.credit += answer.granted - needed;
        if (answer.granted > 0) lease.expiresMs = this.now() + this.options.leaseMs;
        return { ok: true };
      },
      // The primary is gone (the replica is going down): serving beats refusing every call.
      (): TakeResult => ({ ok: true }),
    );
    lease.refilling = refilling;
    void refilling.finally(() => {
      if (lease.refilling === refilling) lease.refilling = undefined;
    });
    return refilling;
  }
}
