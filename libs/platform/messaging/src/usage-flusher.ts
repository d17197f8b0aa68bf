import {
  Events,
  USAGE_FLUSH_PART_BYTES,
  usagePartitionOf,
  UsagePacker,
  expandFlush,
  usageFlushId,
  nextUsageCut,
  type AccountUsage,
  type UsageFlushed,
  type UsageFlushedV2,
  type UsageFlushVersion,
} from '@meridian/contracts';
import type { Logger } from 'pino';

/** Bytes of a part's envelope beside its usage (ids, times, part numbers, keys), with margin. */
const ENVELOPE_BYTES = 512;

/**
 * Splits one flush into compact parts (ADR 0105) below `partBytes` each (serialized), accounts
 * whole and in order. The accounts are grouped by usage partition first (`usagePartitionOf`,
 * ADR 0107): each part holds one usage partition's accounts and says which (`ledgerPartition`,
 * its subject), and parts are numbered across the whole flush. Deterministic, and the parts are
 * kept as built until published, so a retry re-sends the same ids with the same bodies.
 */
export function flushParts(
  producerId: string,
  windowStart: string,
  windowEnd: string,
  accounts: readonly AccountUsage[],
  partBytes = USAGE_FLUSH_PART_BYTES,
): UsageFlushedV2[] {
  const limit = partBytes - ENVELOPE_BYTES - producerId.length;
  const packers: Array<{ packer: UsagePacker; partition: number }> = [];
  for (const [partition, group] of byUsagePartition(accounts)) {
    let current = new UsagePacker();
    for (const account of group) {
      let bytes = current.bytesOf(account);
      if (current.size > 0 && current.bytes + bytes > limit) {
        packers.push({ packer: current, partition });
        current = new UsagePacker();
        bytes = current.bytesOf(account);
      }
      current.add(account, bytes);
    }
    if (current.size > 0) packers.push({ packer: current, partition });
  }
  return packers.map(({ packer, partition }, part) => ({
    id: usageFlushId(producerId, windowStart, part),
    producerId,
    windowStart,
    windowEnd,
    part,
    parts: packers.length,
    ledgerPartition: partition,
    ...packer.result(),
  }));
}

/** The accounts of each usage partition, in partition order, each in the flush's order. */
function byUsagePartition(accounts: readonly AccountUsage[]): Array<[number, AccountUsage[]]> {
  const groups = new Map<number, AccountUsage[]>();
  // An account's node and webhook entries share its partition (and stay together).
  for (const account of accounts) {
    const partition = usagePartitionOf(account.accountId);
    let group = groups.get(partition);
    if (group === undefined) groups.set(partition, (group = []));
    group.push(account);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]);
}

/**
 * The compact size a part is cut at for `version`. Published as v1 (`expandFlush`) a part grows
 * by the ratio of a v1 item to a compact row: ~3.7 at a gateway's usual mix, at most ~24 (a
 * 128-character method name in every item). So v1 parts are cut at an eighth of the size: at
 * most ~200 KiB as v1, below the stream's 1 MiB.
 */
export function usagePartBytes(version: UsageFlushVersion = 2): number {
  return version === 1 ? USAGE_FLUSH_PART_BYTES / 8 : USAGE_FLUSH_PART_BYTES;
}

/**
 * A producer's next usage window, closed at `nowMs`, after the last one ended at `lastEndMs`
 * (ADR 0103): its start strictly above the last end (window starts are the part ids'
 * uniqueness) and the windows never overlap, even with a clock that stood still or stepped
 * back. A window starts no earlier than its first usage (`firstUsageMs`): usage after an idle
 * spell is reported in the hour it was metered (`usageHourOf`), not in the hour the spell began.
 * It ends 1 ms before the next usage cut at the latest (`nextUsageCut`: an hour's start, the
 * Free reset at 07:30 UTC), so the next window starts at the cut. The flusher's window opens when
 * the last one closes, and it also closes one at each cut; delivery-worker's outbox starts at its
 * first attempt and takes the attempts before the cut.
 */
export function nextUsageWindow(
  lastEndMs: number,
  firstUsageMs: number,
  nowMs: number,
): { start: Date; end: Date } {
  const start = Math.max(lastEndMs + 1, Math.min(firstUsageMs, nowMs));
  const end = Math.min(Math.max(nowMs, start), nextUsageCut(start) - 1);
  return { start: new Date(start), end: new Date(end) };
}

/** What the flusher needs of a JetStreamPublisher: either version of a flush part. */
export interface UsagePartPublisher {
  publish(contract: typeof Events.usageFlushedV2, part: UsageFlushedV2): Promise<unknown>;
  publish(contract: typeof Events.usageFlushed, part: UsageFlushed): Promise<unknown>;
}

/**
 * Publishes a compact part as `version` (ADR 0105): 2, itself; 1, the v1 part it stands for
 * (same id), for an upgrade whose billing-ledger does not take compact parts yet.
 */
export function publishUsagePart(
  publisher: UsagePartPublisher,
  part: UsageFlushedV2,
  version: UsageFlushVersion = 2,
): Promise<unknown> {
  return version === 2
    ? publisher.publish(Events.usageFlushedV2, part)
    : publisher.publish(Events.usageFlushed, expandFlush(part));
}

export interface UsageFlusherOptions {
  /** Unique per producer process across the fleet (pod/host name + pid + start time). */
  producerId: string;
  intervalMs: number;
  now: () => Date;
  /** Drains what was metered since the last call (a UsageMeter's `drain`). */
  drain: () => AccountUsage[];
  partBytes?: number;
  /**
   * The contract version published (`USAGE_FLUSH_VERSION`; default 2, compact); it also sets
   * the default `partBytes` (`usagePartBytes`).
   */
  version?: UsageFlushVersion;
  /** Told after each part's publish (metrics). */
  onPublished?: (outcome: 'ok' | 'failed', part: UsageFlushedV2) => void;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * The producer side of fleet usage (ADR 0103), rpc-gateway's (delivery-worker cuts its windows
 * from its attempt log with the same `flushParts`, ADR 0431): every `intervalMs`, and at every
 * usage cut (`nextUsageCut`: an hour's start, the Free reset), the window just closed becomes
 * one flush (split into parts above the size limit), and the parts are published together, not
 * one awaited publish per account. A part whose publish fails is kept
 * and re-sent with the same id on the next tick (billing-ledger applies an id once; the stream
 * also drops a repeat within its duplicate window), so nothing metered is lost or counted
 * twice; `stop` flushes what is left (graceful shutdown).
 *
 * While parts are unsent the window stays open: the meter goes on adding up, one line per
 * account and method, and no new parts are cut until the stream has taken the old ones, or
 * until the next usage cut: a window's usage belongs to its start's hour (`usageHourOf`) and, for
 * a Free account, to the day it was metered in (ADR 0108). So a NATS outage holds at most one
 * window per cut in parts, and the memory it takes is bounded by the accounts served, not by how
 * long the outage lasts.
 */
export class UsageFlusher {
  private timer: NodeJS.Timeout | undefined;
  private cutTimer: NodeJS.Timeout | undefined;
  /** When the current window opened: the last one's end + 1 ms. */
  private windowOpensMs: number;
  private unsent: UsageFlushedV2[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly publisher: UsagePartPublisher,
    private readonly options: UsageFlusherOptions,
  ) {
    this.windowOpensMs = options.now().getTime();
  }

  /** Parts built but not yet stored by the stream (a publish failed). */
  get pendingParts(): number {
    return this.unsent.length;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
    this.closeAtNextCut();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.cutTimer);
    await this.flush();
    // One more attempt for anything a failed publish left behind.
    if (this.unsent.length > 0) await this.flush();
  }

  /** Closes the current window and publishes it with anything still unsent (one at a time). */
  flush(): Promise<void> {
    const next = (this.flushing ?? Promise.resolve()).then(() => this.flushOnce());
    this.flushing = next;
    return next;
  }

  /**
   * A tick at every usage cut, besides the interval's: the window then ends at the cut, not up
   * to an interval later, and the usage metered in that interval is not reported before it.
   *
   * The window is cut here, when the timer fires, not in the flush queue: a tick queued behind
   * a publish waiting for its ack (5 s while NATS is down) drained the meter only when that
   * publish gave up, and the window ending at the cut took the calls of the seconds after it
   * (QA: 8 calls of 16:00:00-16:00:02 billed to 15:00, ADR 0108). Only the publish waits.
   */
  private closeAtNextCut(): void {
    const nowMs = this.options.now().getTime();
    const cut = nextUsageCut(nowMs);
    this.cutTimer = setTimeout(() => {
      // A timer may fire a millisecond early: the window must not end before the cut then.
      if (this.options.now().getTime() >= cut) {
        if (this.windowOpensMs < cut) this.closeWindow();
        void this.flush();
      }
      this.closeAtNextCut();
    }, cut - nowMs);
    this.cutTimer.unref();
  }

  private async flushOnce(): Promise<void> {
    // Parts a failed publish left go first; while the stream refuses them the window stays
    // open, up to the next usage cut.
    if (this.unsent.length > 0 && this.options.now().getTime() < nextUsageCut(this.windowOpensMs)) {
      await this.publishUnsent();
      if (this.unsent.length > 0) return;
    }
    this.closeWindow();
    await this.publishUnsent();
  }

  /** Cuts what the meter holds into parts of the window that ends now, and opens the next. */
  private closeWindow(): void {
    const accounts = this.options.drain();
    // An empty window ends too, or the usage after an idle spell would be reported in the hour
    // the spell began.
    const { start, end } = nextUsageWindow(
      this.windowOpensMs - 1,
      this.windowOpensMs,
      this.options.now().getTime(),
    );
    this.windowOpensMs = end.getTime() + 1;
    if (accounts.length === 0) return;
    this.unsent.push(
      ...flushParts(
        this.options.producerId,
        start.toISOString(),
        end.toISOString(),
        accounts,
        this.options.partBytes ?? usagePartBytes(this.options.version),
      ),
    );
  }

  /** Publishes every unsent part together; the ones the stream refused stay unsent. */
  private async publishUnsent(): Promise<void> {
    if (this.unsent.length === 0) return;
    const batch = this.unsent;
    this.unsent = [];
    const results = await Promise.allSettled(
      batch.map((part) => publishUsagePart(this.publisher, part, this.options.version)),
    );
    let failure: unknown;
    results.forEach((result, i) => {
      const part = batch[i]!;
      if (result.status === 'fulfilled') this.options.onPublished?.('ok', part);
      else {
        failure ??= result.reason;
        this.unsent.push(part);
        this.options.onPublished?.('failed', part);
      }
    });
    if (failure !== undefined)
      // NATS is down or the stream is missing: log once per tick, without a stack (it repeats).
      this.options.logger?.warn(
        {
          pending_parts: this.unsent.length,
          reason: failure instanceof Error ? failure.message : String(failure),
        },
        'usage flush publish failed; will retry with the same ids',
      );
  }
}
