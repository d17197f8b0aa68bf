import type { AccountUsage, UsageFlushed } from '@meridian/contracts';

/** One account's usage across every flush part of one ledger transaction. */
export interface AccountCharge {
  accountId: string;
  totalCu: number;
  /** End of the latest window the charge covers (the journal's occurred_at). */
  lastWindowEnd: string;
}

export interface HourlyRollup {
  accountId: string;
  hour: string;
  network: string;
  method: string;
  calls: number;
  cu: number;
}

/** An account entry of a flush part, with where it came from (for parking). */
export interface SourcedEntry {
  flush: UsageFlushed;
  entry: AccountUsage;
}

export interface FlushAggregate {
  /** One per account, in account-id order (the lock order). */
  charges: AccountCharge[];
  /** One per (account, hour, network, method), by account (recorded, folded later: ADR 0104). */
  rollups: HourlyRollup[];
  /** Account items summed (node lines and webhook lines): what the benchmark counts. */
  items: number;
  /** The parts summed, in the order they were added. */
  flushes: UsageFlushed[];
}

const HOUR_MS = 3_600_000;

/** The hour a window's usage is reported in (by window start, like the per-account events). */
export function hourOf(windowStart: string): string {
  return new Date(Math.floor(Date.parse(windowStart) / HOUR_MS) * HOUR_MS).toISOString();
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface AccountSum {
  charge: AccountCharge;
  /**
   * One per (hour, network, method): a handful per account, found by a scan up to
   * `SCAN_LIMIT` (no key string built per item), by a keyed map beyond it.
   */
  rollups: HourlyRollup[];
  keyed: Map<string, HourlyRollup> | undefined;
}

/** Rollups of an account searched by a scan; more than this get a keyed map. */
const SCAN_LIMIT = 16;

/**
 * Sums flush parts as they arrive into what a set-based apply writes (ADR 0104): one charge per
 * account, one hourly rollup per (account, hour, network, method); webhook deliveries roll up as
 * network `webhooks`, method `webhook_delivery` (the usage API's grouping). Parts are added one
 * by one while the previous transaction runs, so the summing overlaps with Postgres instead of
 * holding the next transaction up; `result()` only sorts the accounts. Pure (no I/O).
 */
export class FlushAccumulator {
  private readonly accounts = new Map<string, AccountSum>();
  private readonly hours = new Map<string, string>();
  private readonly added: UsageFlushed[] = [];
  private items = 0;

  get size(): number {
    return this.added.length;
  }

  add(flush: UsageFlushed): void {
    this.added.push(flush);
    let hour = this.hours.get(flush.windowStart);
    if (hour === undefined) {
      hour = hourOf(flush.windowStart);
      this.hours.set(flush.windowStart, hour);
    }
    for (const entry of flush.accounts) {
      const { accountId } = entry;
      let sum = this.accounts.get(accountId);
      if (sum === undefined) {
        sum = {
          charge: { accountId, totalCu: entry.totalCu, lastWindowEnd: flush.windowEnd },
          rollups: [],
          keyed: undefined,
        };
        this.accounts.set(accountId, sum);
      } else {
        sum.charge.totalCu += entry.totalCu;
        if (flush.windowEnd > sum.charge.lastWindowEnd) sum.charge.lastWindowEnd = flush.windowEnd;
      }
      this.items += entry.items.length;
      if (entry.kind === 'node')
        for (const item of entry.items)
          roll(sum, accountId, hour, item.network, item.method, item.calls, item.cu);
      else
        for (const item of entry.items)
          roll(sum, accountId, hour, 'webhooks', 'webhook_delivery', item.attempts, item.cu);
    }
  }

  result(): FlushAggregate {
    const ids = [...this.accounts.keys()].sort(byString);
    const charges: AccountCharge[] = new Array(ids.length);
    const rollups: HourlyRollup[] = [];
    for (const [i, id] of ids.entries()) {
      const sum = this.accounts.get(id)!;
      charges[i] = sum.charge;
      for (const rollup of sum.rollups) rollups.push(rollup);
    }
    return { charges, rollups, items: this.items, flushes: this.added };
  }
}

function roll(
  sum: AccountSum,
  accountId: string,
  hour: string,
  network: string,
  method: string,
  calls: number,
  cu: number,
): void {
  let rollup: HourlyRollup | undefined;
  if (sum.keyed === undefined) {
    for (const r of sum.rollups)
      if (r.method === method && r.network === network && r.hour === hour) {
        rollup = r;
        break;
      }
  } else rollup = sum.keyed.get(keyOf(hour, network, method));
  if (rollup !== undefined) {
    rollup.calls += calls;
    rollup.cu += cu;
    return;
  }
  rollup = { accountId, hour, network, method, calls, cu };
  sum.rollups.push(rollup);
  if (sum.keyed !== undefined) sum.keyed.set(keyOf(hour, network, method), rollup);
  else if (sum.rollups.length > SCAN_LIMIT)
    sum.keyed = new Map(sum.rollups.map((r) => [keyOf(r.hour, r.network, r.method), r]));
}

const keyOf = (hour: string, network: string, method: string) =>
  `${hour}\u0000${network}\u0000${method}`;

/** Sums flush parts at once (see FlushAccumulator). Pure. */
export function aggregateFlushes(flushes: readonly UsageFlushed[]): FlushAggregate {
  const accumulator = new FlushAccumulator();
  for (const flush of flushes) accumulator.add(flush);
  return accumulator.result();
}

/**
 * The entries of the given accounts in these parts, with their part: what is parked when the
 * ledger does not know an account (rare, so found by a scan instead of kept for every account).
 */
export function entriesOf(
  flushes: readonly UsageFlushed[],
  accountIds: ReadonlySet<string>,
): SourcedEntry[] {
  const found: SourcedEntry[] = [];
  for (const flush of flushes)
    for (const entry of flush.accounts)
      if (accountIds.has(entry.accountId)) found.push({ flush, entry });
  return found;
}
