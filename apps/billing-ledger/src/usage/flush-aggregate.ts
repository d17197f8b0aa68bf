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
  /** One per (account, hour, network, method), in key order (the upsert's lock order). */
  rollups: HourlyRollup[];
  /** Every entry by account, to park the entries of accounts the ledger does not know. */
  entriesOf: Map<string, SourcedEntry[]>;
  /** Account items summed (node lines and webhook lines): what the benchmark counts. */
  items: number;
}

const HOUR_MS = 3_600_000;

/** The hour a window's usage is reported in (by window start, like the per-account events). */
export function hourOf(windowStart: string): string {
  return new Date(Math.floor(Date.parse(windowStart) / HOUR_MS) * HOUR_MS).toISOString();
}

/**
 * Sums flush parts into what a set-based apply writes (ADR 0104): one charge per account,
 * one hourly rollup per (account, hour, network, method); webhook deliveries roll up as
 * network `webhooks`, method `webhook_delivery` (the usage API's grouping). Pure.
 */
export function aggregateFlushes(flushes: readonly UsageFlushed[]): FlushAggregate {
  const charges = new Map<string, AccountCharge>();
  const rollups = new Map<string, HourlyRollup>();
  const entriesOf = new Map<string, SourcedEntry[]>();
  let items = 0;
  const roll = (
    accountId: string,
    hour: string,
    network: string,
    method: string,
    calls: number,
    cu: number,
  ) => {
    const key = `${accountId}\u0000${hour}\u0000${network}\u0000${method}`;
    const rollup = rollups.get(key);
    if (rollup === undefined) rollups.set(key, { accountId, hour, network, method, calls, cu });
    else {
      rollup.calls += calls;
      rollup.cu += cu;
    }
  };
  for (const flush of flushes) {
    const hour = hourOf(flush.windowStart);
    for (const entry of flush.accounts) {
      const { accountId } = entry;
      const charge = charges.get(accountId);
      if (charge === undefined)
        charges.set(accountId, {
          accountId,
          totalCu: entry.totalCu,
          lastWindowEnd: flush.windowEnd,
        });
      else {
        charge.totalCu += entry.totalCu;
        if (flush.windowEnd > charge.lastWindowEnd) charge.lastWindowEnd = flush.windowEnd;
      }
      const sourced = entriesOf.get(accountId);
      if (sourced === undefined) entriesOf.set(accountId, [{ flush, entry }]);
      else sourced.push({ flush, entry });
      items += entry.items.length;
      if (entry.kind === 'node')
        for (const item of entry.items)
          roll(accountId, hour, item.network, item.method, item.calls, item.cu);
      else
        for (const item of entry.items)
          roll(accountId, hour, 'webhooks', 'webhook_delivery', item.attempts, item.cu);
    }
  }
  const byKey = <T>(map: Map<string, T>) =>
    [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  return { charges: byKey(charges), rollups: byKey(rollups), entriesOf, items };
}
