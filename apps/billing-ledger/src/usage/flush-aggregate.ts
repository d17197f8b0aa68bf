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

/**
 * A flush part as the ledger keeps it once summed (ADR 0104): its header and totals, with its
 * account entries only on demand. The consumer keeps a part's message bytes, not its decoded
 * entries: ~1,500 accounts of objects per part, held until the transaction commits, outlived
 * every young-generation collection and were copied by each (scavenges freed ~8 of every 16 MiB;
 * garbage collection was ~17 % of the ledger's thread). Summed the moment it arrives and then
 * dropped, a part's objects die young.
 */
export interface FlushPart {
  readonly id: string;
  readonly producerId: string;
  readonly windowStart: string;
  readonly windowEnd: string;
  /** Account entries in the part. */
  readonly accounts: number;
  /** CU of all its entries. */
  readonly totalCu: number;
  /** The whole part: for a batch summed again without its duplicates, and for parking. */
  body(): UsageFlushed;
  /**
   * False only when the part surely has no entry of this account (its bytes do not hold the id
   * as a JSON string): parking decodes just the parts that may (`entriesOf`).
   */
  mayHold(accountId: string): boolean;
}

const decoder = new TextDecoder();

/**
 * The part of a flush; `bytes` (the message it came in, already validated) makes `body()` decode
 * them again instead of keeping `flush` alive.
 */
export function flushPart(flush: UsageFlushed, bytes?: Uint8Array): FlushPart {
  let totalCu = 0;
  for (const entry of flush.accounts) totalCu += entry.totalCu;
  return {
    id: flush.id,
    producerId: flush.producerId,
    windowStart: flush.windowStart,
    windowEnd: flush.windowEnd,
    accounts: flush.accounts.length,
    totalCu,
    body: bytes === undefined ? kept(flush) : decodedFrom(bytes),
    mayHold: bytes === undefined ? always : searchIn(bytes),
  };
}

// Each closure made in a scope of its own: one made in flushPart would share its scope, which
// holds `flush`, and keep the body alive through the bytes' closure too.
const kept = (flush: UsageFlushed) => () => flush;
const decodedFrom = (bytes: Uint8Array) => () => JSON.parse(decoder.decode(bytes)) as UsageFlushed;
const always = () => true;
/** An account id is a token (`[A-Za-z0-9_-]`): in JSON it is written as is, between quotes. */
const searchIn = (bytes: Uint8Array) => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (accountId: string) => buffer.includes(`"${accountId}"`);
};

export interface FlushAggregate {
  /** One per account, in account-id order (the lock order). */
  charges: AccountCharge[];
  /** One per (account, hour, network, method), by account (recorded, folded later: ADR 0104). */
  rollups: HourlyRollup[];
  /** Account items summed (node lines and webhook lines): what the benchmark counts. */
  items: number;
  /** The parts summed, in the order they were added. */
  parts: FlushPart[];
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
  private readonly added: FlushPart[] = [];
  private items = 0;

  get size(): number {
    return this.added.length;
  }

  /** Sums a part; only `part` is kept (the entries' objects can die young). */
  add(flush: UsageFlushed, part: FlushPart = flushPart(flush)): void {
    this.added.push(part);
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
    return { charges, rollups, items: this.items, parts: this.added };
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

/** Sums kept parts again (their bodies decoded once more): a batch without its duplicates. */
export function aggregateParts(parts: readonly FlushPart[]): FlushAggregate {
  const accumulator = new FlushAccumulator();
  for (const part of parts) accumulator.add(part.body(), part);
  return accumulator.result();
}

/**
 * The entries of the given accounts in these parts, with their part: what is parked when the
 * ledger does not know an account (rare, so found by a scan instead of kept for every account).
 */
export function entriesOf(
  parts: readonly FlushPart[],
  accountIds: ReadonlySet<string>,
): SourcedEntry[] {
  const found: SourcedEntry[] = [];
  const ids = [...accountIds];
  for (const part of parts) {
    // Parked accounts are rare, but one that keeps being metered is in every batch: decode only
    // the parts whose bytes name it, not every part of the batch.
    if (!ids.some((id) => part.mayHold(id))) continue;
    const flush = part.body();
    for (const entry of flush.accounts)
      if (accountIds.has(entry.accountId)) found.push({ flush, entry });
  }
  return found;
}
