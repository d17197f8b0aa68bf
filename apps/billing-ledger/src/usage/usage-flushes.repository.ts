import { Injectable } from '@nestjs/common';
import type { UsageFlushed } from '@meridian/contracts';
import { DataSource, type EntityManager } from 'typeorm';
import { numberArray, textArray } from '../db/array-literal';
import type { HourlyRollup } from './flush-aggregate';

export interface ParkedEntry {
  flushId: string;
  accountId: string;
  kind: string;
  entry: unknown;
}

/** SQL of fleet usage (ADR 0104): the applied-flush record, hourly rollups, parked entries. */
@Injectable()
export class UsageFlushesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records flush parts as applied by this transaction and answers the ids that were new.
   * An id another transaction recorded (committed, or in flight: the insert waits for it) is
   * left out, so each part's CU are applied by exactly one transaction. Ids go in sorted, so two
   * transactions with overlapping parts take the index locks in the same order.
   */
  async claim(
    manager: EntityManager,
    flushes: readonly UsageFlushed[],
    batch: string,
    now: Date,
  ): Promise<Set<string>> {
    if (flushes.length === 0) return new Set();
    const sorted = [...flushes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO billing.usage_flushes (id, producer_id, window_start, window_end, accounts, total_cu, batch, applied_at)
       SELECT u.*, $7, $8 FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::bigint[]) AS u
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        sorted.map((f) => f.id),
        sorted.map((f) => f.producerId),
        sorted.map((f) => f.windowStart),
        sorted.map((f) => f.windowEnd),
        sorted.map((f) => f.accounts.length),
        sorted.map((f) => f.accounts.reduce((sum, a) => sum + a.totalCu, 0)),
        batch,
        now.toISOString(),
      ],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Adds to the hourly usage rows (in the given order: callers pass them sorted by key). */
  async addHourly(manager: EntityManager, rollups: readonly HourlyRollup[]): Promise<void> {
    if (rollups.length === 0) return;
    await manager.query(
      `INSERT INTO billing.usage_hourly (account_id, hour, network, method, calls, cu)
       SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
       ON CONFLICT (account_id, hour, network, method)
       DO UPDATE SET calls = billing.usage_hourly.calls + EXCLUDED.calls, cu = billing.usage_hourly.cu + EXCLUDED.cu`,
      [
        textArray(rollups.map((r) => r.accountId)),
        textArray(rollups.map((r) => r.hour)),
        textArray(rollups.map((r) => r.network)),
        textArray(rollups.map((r) => r.method)),
        numberArray(rollups.map((r) => r.calls)),
        numberArray(rollups.map((r) => r.cu)),
      ],
    );
  }

  async park(manager: EntityManager, parked: readonly ParkedEntry[], now: Date): Promise<void> {
    if (parked.length === 0) return;
    await manager.query(
      `INSERT INTO billing.usage_parked (flush_id, account_id, kind, entry, parked_at)
       SELECT f, a, k, e, $5 FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[]) AS u(f, a, k, e)
       ON CONFLICT DO NOTHING`,
      [
        parked.map((p) => p.flushId),
        parked.map((p) => p.accountId),
        parked.map((p) => p.kind),
        parked.map((p) => JSON.stringify(p.entry)),
        now.toISOString(),
      ],
    );
  }

  /**
   * Forgets applied-flush records older than `before`: once the BILLING stream no longer holds
   * a message (7 days) it cannot be redelivered. Bounded per call so the tick stays short.
   */
  async prune(before: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `DELETE FROM billing.usage_flushes WHERE id IN (
         SELECT id FROM billing.usage_flushes WHERE applied_at < $1 ORDER BY applied_at LIMIT $2)
       RETURNING id`,
      [before.toISOString(), limit],
    );
    return rows.length;
  }
}
