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

  constructor(private readonly window: UsageWindow = new UsageWindow()) {}

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
  }

  /** CU this process spent that no balance state can include yet. */
  get unpublishedCu(): number {
    return this.inFlightCu + (this.windowSeq === this.window.seq ? this.windowCu : 0);
  }

  /** Whether the estimate is spent: a call is refused as exhausted. */
  get spent(): boolean {
    return this.remainingCu <= 0;
  }

  /** Admits one call of `cu` if the estimate is above zero (false: refuse it). */
  take(cu: number): boolean {
    if (this.remainingCu <= 0) return false;
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
  }
}
