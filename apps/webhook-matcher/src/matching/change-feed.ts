import type { ChangeRow } from './matching.repository';

/** A gap in the sequence older than this is a rolled-back transaction, not a late commit. */
export const GAP_TIMEOUT_MS = 30_000;

/**
 * The read position in webhooks.change_log. Sequence order is not commit order: a transaction
 * can take seq 10, another takes 11 and commits first. So the feed re-reads from a low-water
 * mark that only passes a seq once it was seen and every lower one was too (or a hole stayed
 * open longer than GAP_TIMEOUT_MS: a rollback or a cached sequence value that never commits),
 * and remembers which rows above it it already applied.
 */
export class ChangeFeedCursor {
  private lowWater: number;
  private readonly seen = new Set<number>();

  constructor(start: number) {
    this.lowWater = start;
  }

  get position(): number {
    return this.lowWater;
  }

  /** The rows of a read (seq > position) that were not applied yet; advances the mark. */
  accept(rows: readonly ChangeRow[]): ChangeRow[] {
    const fresh = rows.filter((r) => r.seq > this.lowWater && !this.seen.has(r.seq));
    for (const r of fresh) this.seen.add(r.seq);
    const bySeq = new Map(rows.map((r) => [r.seq, r]));
    for (;;) {
      const next = this.lowWater + 1;
      if (this.seen.has(next)) {
        this.seen.delete(next);
        this.lowWater = next;
        continue;
      }
      // A hole: skip it only when a later row is settled and old enough that the missing
      // transaction cannot still commit.
      const later = [...bySeq.values()].find((r) => r.seq > next);
      if (later && later.settled && later.ageMs > GAP_TIMEOUT_MS) {
        this.lowWater = next;
        continue;
      }
      break;
    }
    return fresh;
  }
}
