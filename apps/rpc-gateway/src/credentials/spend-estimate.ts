import { StoreTimeoutError } from '../limits/fleet-bucket-store';
import type { LeaseAnswer } from '../limits/leased-rate-limiter';

/**
 * The usage flush's windows as the estimates see them: `seq` moves on each time the meter is
 * drained into a flush (ADR 0103), so CU metered under the current `seq` are not published yet
 * and no balance state can hold them.
 */
export class UsageWindow {
  seq = 0;

  cut(): void {
    this.seq++;
  }
}

/**
 * The spend pools every process of the fleet shares (ADR 0201 amendment "The estimate across
 * the fleet"): per account and balance-state version, a counter that starts at the state's
 * spendable CU (`seedCu`, the same for every process that took that state), and from which
 * processes lease chunks. `take` first charges `chargedCu` (CU spent without the pool's grant:
 * not published yet when the state was taken, or admitted while the pool was unreachable; they
 * may take the pool below zero), then grants up to `wantedCu` of what is left. Rejects while the
 * pool is unreachable; a StoreTimeoutError carries the late answer, should one come.
 */
export interface SpendPool {
  now(): number;
  take(
    accountId: string,
    version: number,
    seedCu: number,
    wantedCu: number,
    chargedCu: number,
  ): Promise<LeaseAnswer>;
}

export interface SpendLeaseOptions {
  /** The smallest chunk leased (a few calls of network S). */
  minChunkCu: number;
  /** No chunk above this share of the state's spendable CU (unless that is below the minimum). */
  maxChunkShare: number;
  /**
   * The chunk doubles when the last one lasted less than this, halves when it lasted more than
   * four times this; while the pool is unreachable, it is tried again at most this often.
   */
  leaseMs: number;
}

export const DEFAULT_SPEND_LEASE: SpendLeaseOptions = {
  minChunkCu: 500,
  maxChunkShare: 1 / 32,
  leaseMs: 250,
};

/** Where the estimate's admissions are bounded: alone (no pool), by the pool, or alone while
 * the pool is unreachable (its CU then charged to the pool once it answers). */
type Mode = 'alone' | 'fleet' | 'unreachable';

/**
 * This process's estimate of what one account can still spend (ADR 0201, amendment "a local
 * estimate of spendable CU"): the spendable CU of the last balance state it took, less the CU of
 * the calls it admitted since. billing-ledger's state lags the calls by a usage flush and the
 * ledger's apply; the estimate stops this process's share of that lag at the allowance. It only
 * ever refuses more than the state does, never admits what the state refuses.
 *
 * One mutable object per account for the life of the process, so the hot path reads and
 * changes it without allocating (ADR 0207). A call is admitted while the estimate is above zero
 * and may take it below (as the ledger lets the last call overdraw rather than refuse what
 * does not fit exactly), so this process overdraws by at most one call.
 */
export class SpendEstimate {
  /** The balance-state version the estimate was last reset from (-1: none yet). */
  version = -1;
  /** Infinity while the state says nothing of the pools (a static token): nothing refused. */
  remainingCu = Number.POSITIVE_INFINITY;
  /** CU of calls taken and neither metered nor given back yet (answers awaited). */
  private inFlightCu = 0;
  /** CU metered in the usage window `windowSeq` (the open one, unless it was cut since). */
  private windowCu = 0;
  private windowSeq = 0;

  // The fleet's share (ADR 0201 amendment "The estimate across the fleet"), with a pool only.
  private mode: Mode = 'alone';
  /** The state's spendable CU: the pool's seed. */
  private seedCu = 0;
  /**
   * CU leased from the pool and not reserved yet. Below zero: CU spent that the pool has not
   * been charged yet (unpublished when the state came, or spent while it was unreachable).
   */
  private heldCu = 0;
  /** CU reserved by requests (`cover`) that their calls take next. */
  private prepaidCu = 0;
  /** The pool answered that it has nothing left for this state. */
  private poolSpent = false;
  private chunkCu: number;
  private lastLeaseMs = Number.NEGATIVE_INFINITY;
  private leasing: Promise<void> | undefined;

  constructor(
    private readonly window: UsageWindow = new UsageWindow(),
    private readonly pool?: SpendPool,
    private readonly accountId = '',
    private readonly lease: SpendLeaseOptions = DEFAULT_SPEND_LEASE,
  ) {
    this.chunkCu = lease.minChunkCu;
  }

  /**
   * A newer balance state: the estimate starts again from what it says is spendable, less what
   * this process spent that no state can hold yet (calls in flight, and those metered into the
   * window not flushed yet). What it flushed and the ledger has not applied yet is not known
   * here: that part of the lag remains (ADR 0201 amendment, "Bound").
   */
  reset(version: number, spendableCu: number | undefined): void {
    this.version = version;
    this.remainingCu =
      spendableCu === undefined ? Number.POSITIVE_INFINITY : spendableCu - this.unpublishedCu;
    if (this.pool === undefined || spendableCu === undefined || spendableCu <= 0) {
      this.mode = 'alone';
      return;
    }
    // A new pool: what this process leased from the last one is not backed by it, and what it
    // spent that the state cannot hold yet is charged to it at the first lease.
    if (this.mode === 'alone') this.mode = 'fleet';
    this.seedCu = spendableCu;
    this.heldCu = -this.unpublishedCu;
    this.prepaidCu = 0;
    this.poolSpent = false;
    this.chunkCu = Math.min(this.chunkCu, this.maxChunk());
  }

  /** CU this process spent that no balance state can include yet. */
  get unpublishedCu(): number {
    return this.inFlightCu + (this.windowSeq === this.window.seq ? this.windowCu : 0);
  }

  /** Whether the estimate leases from the fleet's pool (then requests `cover` their calls). */
  get pooled(): boolean {
    return this.mode !== 'alone';
  }

  /** Whether the estimate is spent: a call is refused as exhausted. */
  get spent(): boolean {
    return (
      this.remainingCu <= 0 ||
      (this.mode === 'fleet' && this.poolSpent && this.heldCu + this.prepaidCu <= 0)
    );
  }

  /**
   * Before a request's calls take their CU (`cuOfRequest` of them at most): undefined when what
   * this process leased covers them (reserved for them now: the hot path, no I/O), else a
   * promise that settles once a lease from the pool does, or the pool is spent or unreachable
   * (`take` then refuses what is not covered, or admits as this process alone would). Without
   * a pool, always undefined.
   */
  cover(cuOfRequest: number): Promise<void> | undefined {
    if (this.mode === 'alone') return undefined;
    if (this.mode === 'unreachable') {
      if (this.leasing === undefined && this.pool!.now() - this.lastLeaseMs >= this.lease.leaseMs)
        this.refill(0);
      return undefined;
    }
    if (this.reserve(cuOfRequest)) return undefined;
    if (this.poolSpent || this.remainingCu <= 0) return undefined;
    return this.coverAfterRefill(cuOfRequest);
  }

  /**
   * Whether `take` would admit every call of a request paid whole (a gRPC method's calls) of
   * `cu` in all, the last of `lastCu`: the estimate is still above zero when the last call comes.
   * Asked before the request takes plan-RPS tokens (nothing changes); what this process leased
   * from the pool is not asked, so `take` may still refuse there (ADR 0201 amendment).
   */
  coversWhole(cu: number, lastCu: number): boolean {
    return this.remainingCu - (cu - lastCu) > 0;
  }

  /** Admits one call of `cu` if the estimate is above zero (false: refuse it). */
  take(cu: number): boolean {
    if (this.remainingCu <= 0) return false;
    if (this.mode === 'fleet') {
      // As the estimate: admitted while above zero, the last call may take it below.
      if (this.prepaidCu + this.heldCu <= 0) return false;
      const prepaid = Math.min(this.prepaidCu, cu);
      this.prepaidCu -= prepaid;
      this.heldCu -= cu - prepaid;
    } else if (this.mode === 'unreachable') this.heldCu -= cu;
    this.remainingCu -= cu;
    this.inFlightCu += cu;
    return true;
  }

  /** A call taken before was answered and metered (into the open usage window). */
  metered(cu: number): void {
    this.inFlightCu -= cu;
    if (this.windowSeq !== this.window.seq) {
      this.windowSeq = this.window.seq;
      this.windowCu = 0;
    }
    this.windowCu += cu;
  }

  /**
   * A call taken before turned out unbilled (no node answered, the session refused it): its CU
   * come back. Also after a newer state: the reset counted it in flight, so took it off too.
   */
  giveBack(cu: number): void {
    this.inFlightCu -= cu;
    this.remainingCu += cu;
    if (this.mode !== 'alone') this.heldCu += cu;
  }

  /** Reserves `cu` from what is held, topping it up ahead of need; false if it is short. */
  private reserve(cu: number): boolean {
    if (this.heldCu < cu) return false;
    this.heldCu -= cu;
    this.prepaidCu += cu;
    if (this.leasing === undefined && !this.poolSpent && this.heldCu < this.chunkCu / 2)
      this.refill(0);
    return true;
  }

  /** Waits for leases until `cu` is held (one lease in flight per account and process). */
  private async coverAfterRefill(cu: number): Promise<void> {
    for (;;) {
      if (this.leasing === undefined) this.refill(cu - Math.max(this.heldCu, 0));
      await this.leasing;
      if (this.mode !== 'fleet' || this.reserve(cu)) return;
      if (this.poolSpent || this.remainingCu <= 0) return;
    }
  }

  private maxChunk(): number {
    return Math.max(this.lease.minChunkCu, Math.floor(this.seedCu * this.lease.maxChunkShare));
  }

  /**
   * Asks the pool for `shortfallCu` plus a chunk, charging it what was spent without its grant.
   * The chunk follows this process's recent spend: it doubles when the last one lasted less than
   * a lease period, halves when it lasted more than four, never above `maxChunkShare` of the
   * state (ADR 0201 amendment: the bound is a chunk per process).
   */
  private refill(shortfallCu: number): void {
    const pool = this.pool!;
    const nowMs = pool.now();
    const lasted = nowMs - this.lastLeaseMs;
    if (lasted < this.lease.leaseMs) this.chunkCu = Math.min(this.maxChunk(), this.chunkCu * 2);
    else if (lasted > 4 * this.lease.leaseMs)
      this.chunkCu = Math.max(this.lease.minChunkCu, Math.floor(this.chunkCu / 2));
    this.lastLeaseMs = nowMs;
    const version = this.version;
    const chargedCu = Math.max(0, -this.heldCu);
    this.heldCu += chargedCu;
    const wantedCu = shortfallCu + this.chunkCu;
    const granted = (answer: LeaseAnswer) => {
      this.mode = 'fleet';
      if (!answer.ok) this.poolSpent = true;
      else {
        this.heldCu += answer.granted;
        // takeUpTo grants less than wanted only when less than one CU is left.
        if (answer.granted < wantedCu) this.poolSpent = true;
      }
    };
    const leasing = pool.take(this.accountId, version, this.seedCu, wantedCu, chargedCu).then(
      (answer) => {
        if (this.version === version) granted(answer);
      },
      (error: unknown) => {
        if (this.version !== version) return;
        // Unreachable: admit as this process alone until it answers (ADR 0201 amendment). The
        // charge is owed again, unless a late answer says it was made.
        this.mode = 'unreachable';
        this.heldCu -= chargedCu;
        if (error instanceof StoreTimeoutError)
          (error.late as Promise<LeaseAnswer>).then(
            (answer) => {
              if (this.version !== version) return;
              this.heldCu += chargedCu;
              if (answer.ok) this.heldCu += answer.granted;
            },
            () => undefined,
          );
      },
    );
    this.leasing = leasing;
    void leasing.finally(() => {
      if (this.leasing === leasing) this.leasing = undefined;
    });
  }
}
