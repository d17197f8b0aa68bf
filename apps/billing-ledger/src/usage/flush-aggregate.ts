import {
  compactFlush,
  unpackAccounts,
  USAGE_ROW,
  usageHourOf,
  type AccountUsage,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';

/** One account's usage across every flush part of one ledger transaction. */
export interface AccountCharge {
  accountId: string;
  totalCu: number;
  /** End of the earliest window the charge covers. */
  firstWindowEnd: string;
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

/** An account entry of a flush part (as v1 wrote it), with the part it came from (for parking). */
export interface SourcedEntry {
  flushId: string;
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
  /** Accounts in the part. */
  readonly accounts: number;
  /** CU of all its rows. */
  readonly totalCu: number;
  /**
   * The whole part, compact (a v1 part as `compactFlush` gives it): for a batch summed again
   * without its duplicates, and for parking.
   */
  body(): UsageFlushedV2;
  /**
   * False only when the part surely has no entry of this account (its bytes do not hold the id
   * as a JSON string): parking decodes just the parts that may (`entriesOf`).
   */
  mayHold(accountId: string): boolean;
}

const decoder = new TextDecoder();

/**
 * The part of a flush; `bytes` (the message it came in, already validated, of `version`) makes
 * `body()` decode them again instead of keeping `flush` alive.
 */
export function flushPart(
  flush: UsageFlushedV2,
  bytes?: Uint8Array,
  version: 1 | 2 = 2,
): FlushPart {
  return {
    id: flush.id,
    producerId: flush.producerId,
    windowStart: flush.windowStart,
    windowEnd: flush.windowEnd,
    accounts: flush.accounts.length,
    totalCu: flush.totalCu,
    body: bytes === undefined ? kept(flush) : decodedFrom(bytes, version),
    mayHold: bytes === undefined ? always : searchIn(bytes),
  };
}

// Each closure made in a scope of its own: one made in flushPart would share its scope, which
// holds `flush`, and keep the body alive through the bytes' closure too.
const kept = (flush: UsageFlushedV2) => () => flush;
const decodedFrom = (bytes: Uint8Array, version: 1 | 2) =>
  version === 2
    ? () => JSON.parse(decoder.decode(bytes)) as UsageFlushedV2
    : () => compactFlush(JSON.parse(decoder.decode(bytes)) as UsageFlushed);
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

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A usage line of the accumulator: one (hour, network, method), numbered across its parts. */
interface Line {
  hour: string;
  network: string;
  method: string;
}

interface AccountSum {
  charge: AccountCharge;
  /** One per line it used (a handful per account): found by a scan over line numbers. */
  lines: number[];
  rollups: HourlyRollup[];
}

/**
 * Sums flush parts as they arrive into what a set-based apply writes (ADR 0104): one charge per
 * account, one hourly rollup per (account, hour, network, method); webhook deliveries roll up as
 * network `webhooks`, method `webhook_delivery` (the usage API's grouping). A compact part
 * (ADR 0105) is summed row by row: each of its lines is numbered once per part, so an account's
 * rollup is found by comparing small integers, not strings. Parts are added one by one while the
 * previous transaction runs, so the summing overlaps with Postgres instead of holding the next
 * transaction up; `result()` only sorts the accounts. Pure (no I/O).
 */
export class FlushAccumulator {
  private readonly accounts = new Map<string, AccountSum>();
  private readonly hours = new Map<string, string>();
  private readonly lineNumbers = new Map<string, number>();
  private readonly lines: Line[] = [];
  private readonly added: FlushPart[] = [];
  private items = 0;

  get size(): number {
    return this.added.length;
  }

  /** Sums a compact part; only `part` is kept (the body's objects can die young). */
  add(flush: UsageFlushedV2, part: FlushPart = flushPart(flush)): void {
    this.added.push(part);
    let hour = this.hours.get(flush.windowStart);
    if (hour === undefined) {
      hour = usageHourOf(flush.windowStart);
      this.hours.set(flush.windowStart, hour);
    }
    const numbers = flush.lines.map((line) =>
      line.kind === 'node'
        ? this.lineNumber(hour, line.network, line.method)
        : this.lineNumber(hour, 'webhooks', 'webhook_delivery'),
    );
    const { accounts, usage } = flush;
    let index = -1;
    let sum: AccountSum | undefined;
    for (let r = 0; r < usage.length; r += USAGE_ROW) {
      const a = usage[r]!;
      const cu = usage[r + 3]!;
      if (a !== index || sum === undefined) {
        index = a;
        const accountId = accounts[a]!;
        sum = this.accounts.get(accountId);
        if (sum === undefined) {
          sum = {
            charge: {
              accountId,
              totalCu: 0,
              firstWindowEnd: flush.windowEnd,
              lastWindowEnd: flush.windowEnd,
            },
            lines: [],
            rollups: [],
          };
          this.accounts.set(accountId, sum);
        } else if (flush.windowEnd > sum.charge.lastWindowEnd)
          sum.charge.lastWindowEnd = flush.windowEnd;
        else if (flush.windowEnd < sum.charge.firstWindowEnd)
          sum.charge.firstWindowEnd = flush.windowEnd;
      }
      sum.charge.totalCu += cu;
      this.roll(sum, numbers[usage[r + 1]!]!, usage[r + 2]!, cu);
    }
    this.items += usage.length / USAGE_ROW;
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

  private lineNumber(hour: string, network: string, method: string): number {
    const key = `${hour}\u0000${network}\u0000${method}`;
    let number = this.lineNumbers.get(key);
    if (number === undefined) {
      number = this.lines.length;
      this.lines.push({ hour, network, method });
      this.lineNumbers.set(key, number);
    }
    return number;
  }

  private roll(sum: AccountSum, line: number, calls: number, cu: number): void {
    // An account uses a handful of lines: a scan over small integers finds its rollup.
    const at = sum.lines.indexOf(line);
    if (at >= 0) {
      const rollup = sum.rollups[at]!;
      rollup.calls += calls;
      rollup.cu += cu;
      return;
    }
    const { hour, network, method } = this.lines[line]!;
    sum.lines.push(line);
    sum.rollups.push({ accountId: sum.charge.accountId, hour, network, method, calls, cu });
  }
}

/** Sums compact flush parts at once (see FlushAccumulator). Pure. */
export function aggregateFlushes(flushes: readonly UsageFlushedV2[]): FlushAggregate {
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
 * The entries of the given accounts in these parts, as v1 wrote them, with their part: what is
 * parked when the ledger does not know an account (rare, so found by a scan instead of kept for
 * every account).
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
    for (const entry of unpackAccounts(part.body()))
      if (accountIds.has(entry.accountId)) found.push({ flushId: part.id, entry });
  }
  return found;
}

/**
 * For each account of `boundaries` (account id → a moment, ms), its CU in the parts whose
 * window ended by that moment: the late usage of an account whose parts lie on both sides of
 * its period's start (ADR 0108). Rare (the batches at a period's start), so found by reading
 * the parts again, each once, instead of kept for every account.
 */
export function cuEndedBy(
  parts: readonly FlushPart[],
  boundaries: ReadonlyMap<string, number>,
): Map<string, number> {
  const found = new Map<string, number>();
  // A loop, not Math.max(...values): at a Free reset every busy Free account straddles, and a
  // spread of ~150,000 or more arguments overflows the stack.
  let latest = -Infinity;
  for (const [id, boundary] of boundaries) {
    found.set(id, 0);
    if (boundary > latest) latest = boundary;
  }
  for (const part of parts) {
    const end = Date.parse(part.windowEnd);
    if (end > latest) continue;
    const { accounts, usage } = part.body();
    for (let r = 0; r < usage.length; r += USAGE_ROW) {
      const accountId = accounts[usage[r]!]!;
      const boundary = boundaries.get(accountId);
      if (boundary !== undefined && end <= boundary)
        found.set(accountId, found.get(accountId)! + usage[r + 3]!);
    }
  }
  return found;
}
