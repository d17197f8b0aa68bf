import { Injectable } from '@nestjs/common';

/** How long a version put into KV waits for an account's next usage transaction to mark it. */
export const MARK_BY_TICK_AFTER_MS = 5_000;

interface Mark {
  version: number;
  /** When it was put into KV (clock ms). */
  at: number;
}

/**
 * Versions this process put into the balance-state KV bucket whose `published_version` in the
 * database is still behind (ADR 0106). At a fleet's shape nearly every account is in the next
 * usage transaction, which holds its row locked most of the time, so an UPDATE of the markers
 * after each pass skipped most rows and was tried again and again (Postgres time comparable to
 * the balance updates themselves). Instead the next usage transaction writes an account's mark
 * with its balance (`saveBalances`, `GREATEST`: a marker never goes back), and the publisher's
 * full pass marks only what no usage transaction took within `MARK_BY_TICK_AFTER_MS`.
 *
 * A mark is a version that is in KV: the marker never runs ahead of what gateways can read. One
 * lost (a crash) only leaves the marker behind, and the version is put again: puts are idempotent.
 */
@Injectable()
export class PublishedMarks {
  private readonly marks = new Map<string, Mark>();

  /** Versions now in KV (each replaces an older mark of its account, never a newer one). */
  put(rows: ReadonlyArray<{ accountId: string; version: number }>, at: number): void {
    for (const { accountId, version } of rows) {
      const mark = this.marks.get(accountId);
      if (mark === undefined || mark.version < version) this.marks.set(accountId, { version, at });
    }
  }

  /** The version in KV not yet marked, if any. */
  versionOf(accountId: string): number | undefined {
    return this.marks.get(accountId)?.version;
  }

  /** The marks of `accountIds` (0: none), in that order: what a usage transaction writes. */
  forSave(accountIds: readonly string[]): number[] {
    return accountIds.map((accountId) => this.marks.get(accountId)?.version ?? 0);
  }

  /** Marks written (a transaction committed them, or the publisher's own update). */
  marked(rows: ReadonlyArray<{ accountId: string; version: number }>): void {
    for (const { accountId, version } of rows) {
      const mark = this.marks.get(accountId);
      if (mark !== undefined && mark.version <= version) this.marks.delete(accountId);
    }
  }

  /**
   * Forgets an account's mark unwritten: another replica publishes it now. As a mark lost in a
   * crash, it only leaves the marker behind, and that replica puts the version again.
   */
  drop(accountId: string): void {
    this.marks.delete(accountId);
  }

  /** True when the mark of `version` has waited long enough for the publisher to write it. */
  dueForPublisher(accountId: string, version: number, now: number): boolean {
    const mark = this.marks.get(accountId);
    return mark !== undefined && mark.version >= version && now - mark.at >= MARK_BY_TICK_AFTER_MS;
  }

  /** Every mark not yet written (a graceful stop writes them). */
  all(): Array<{ accountId: string; version: number }> {
    return [...this.marks].map(([accountId, mark]) => ({ accountId, version: mark.version }));
  }
}
