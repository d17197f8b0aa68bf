import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { numberArray, textArray } from '../db/array-literal';
import type { FlushPart, HourlyRollup } from './flush-aggregate';

export interface ParkedEntry {
  flushId: string;
  accountId: string;
  kind: string;
  entry: unknown;
}

/**
 * Account shards of the recorded hourly usage (ADR 0104): the folder folds one at a time, so a
 * fold's upserts come in eight small bursts spread over its interval instead of one large one.
 * Any split folds to the same sums, but only shards below this count are folded: lowering it
 * needs a migration that moves the rows of the shards it drops (`shard % <new count>`).
 */
export const HOURLY_SHARDS = 8;

/** The shard of an account's recorded hourly usage: FNV-1a of its id, modulo HOURLY_SHARDS. */
export function hourlyShardOf(accountId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    hash ^= accountId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % HOURLY_SHARDS;
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
    parts: readonly FlushPart[],
    batch: string,
    now: Date,
  ): Promise<Set<string>> {
    if (parts.length === 0) return new Set();
    const sorted = [...parts].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO billing.usage_flushes (id, producer_id, window_start, window_end, accounts, total_cu, batch, applied_at)
       SELECT u.*, $7, $8 FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::bigint[]) AS u
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        sorted.map((p) => p.id),
        sorted.map((p) => p.producerId),
        sorted.map((p) => p.windowStart),
        sorted.map((p) => p.windowEnd),
        sorted.map((p) => p.accounts),
        sorted.map((p) => p.totalCu),
        batch,
        now.toISOString(),
      ],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Records hourly usage in the caller's (usage) transaction as one row of arrays per account
   * shard (`hourlyShardOf`), folded into `usage_hourly` later by `foldHourly` (ADR 0104): no
   * per-row upsert on the usage path. The arrays are stored as the literals sent (text: nothing
   * is parsed here; the fold casts them). `now` is the transaction's time by the ledger's clock:
   * the folder's timer compares it with its own (`oldestRecorded`).
   */
  async recordHourly(
    manager: EntityManager,
    rollups: readonly HourlyRollup[],
    now: Date,
  ): Promise<void> {
    if (rollups.length === 0) return;
    const shards = new Map<number, HourlyRollup[]>();
    let accountId: string | undefined;
    let into: HourlyRollup[] = [];
    for (const rollup of rollups) {
      // Rollups come grouped by account: one hash per account, not per rollup.
      if (rollup.accountId !== accountId) {
        accountId = rollup.accountId;
        const shard = hourlyShardOf(accountId);
        let list = shards.get(shard);
        if (list === undefined) shards.set(shard, (list = []));
        into = list;
      }
      into.push(rollup);
    }
    const values: string[] = [];
    const params: unknown[] = [];
    params.push(now.toISOString());
    for (const [shard, rows] of shards) {
      const at = params.length;
      values.push(
        `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7}, $1)`,
      );
      params.push(
        shard,
        textArray(rows.map((r) => r.accountId)),
        textArray(rows.map((r) => r.hour)),
        textArray(rows.map((r) => r.network)),
        textArray(rows.map((r) => r.method)),
        numberArray(rows.map((r) => r.calls)),
        numberArray(rows.map((r) => r.cu)),
      );
    }
    await manager.query(
      `INSERT INTO billing.usage_hourly_pending (shard, account_ids, hours, networks, methods, calls, cu, recorded_at)
       VALUES ${values.join(', ')}`,
      params,
    );
  }

  /**
   * When the first row still recorded for `shard` (in id order: about its oldest) was recorded,
   * by the ledger's clock; null when none waits. One index probe.
   */
  async oldestRecorded(shard: number): Promise<Date | null> {
    const rows: Array<{ recorded_at: Date }> = await this.dataSource.query(
      `SELECT recorded_at FROM billing.usage_hourly_pending WHERE shard = $1 ORDER BY id LIMIT 1`,
      [shard],
    );
    return rows[0]?.recorded_at ?? null;
  }

  /**
   * Folds up to `limit` recorded rows of one shard into `usage_hourly` in one transaction: they
   * are deleted and their sums, grouped per (account, hour, network, method), added in key
   * order. Hours are grouped as the text recorded (`usageHourOf`: one ISO form per hour) and cast
   * once per sum, not once per recorded rollup. Rows are taken in id order with `FOR UPDATE`, so a concurrent fold of the shard
   * (another replica, a read) waits for this one and then skips what it deleted: each recorded
   * row is added exactly once. Shards hold disjoint accounts, so folds of two shards touch no
   * common row. Answers how many recorded rows were folded.
   */
  async foldHourly(shard: number, limit: number): Promise<number> {
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      // Its unnest estimates would put it far above jit_above_cost, as the usage statements.
      await manager.query('SET LOCAL jit = off');
      const [row]: Array<{ folded: number }> = await manager.query(
        `WITH taken AS (
           DELETE FROM billing.usage_hourly_pending
            WHERE id IN (SELECT id FROM billing.usage_hourly_pending WHERE shard = $1 ORDER BY id LIMIT $2 FOR UPDATE)
           RETURNING account_ids, hours, networks, methods, calls, cu),
         added AS (
           INSERT INTO billing.usage_hourly (account_id, hour, network, method, calls, cu)
           SELECT g.account_id, g.hour::timestamptz, g.network, g.method, g.calls, g.cu
             FROM (SELECT u.account_id, u.hour, u.network, u.method, sum(u.calls) AS calls, sum(u.cu) AS cu
                     FROM taken t,
                          unnest(t.account_ids::text[], t.hours::text[], t.networks::text[], t.methods::text[], t.calls::bigint[], t.cu::bigint[])
                            AS u(account_id, hour, network, method, calls, cu)
                    GROUP BY 1, 2, 3, 4) g
            ORDER BY 1, 2, 3, 4
           ON CONFLICT (account_id, hour, network, method)
           DO UPDATE SET calls = billing.usage_hourly.calls + EXCLUDED.calls, cu = billing.usage_hourly.cu + EXCLUDED.cu
           RETURNING 1)
         SELECT (SELECT count(*) FROM taken)::int AS folded, (SELECT count(*) FROM added)::int AS added`,
        [shard, limit],
      );
      return row!.folded;
    });
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
   * Forgets applied-part records older than `before` (the ticker passes now −
   * `USAGE_PART_RETENTION_MS`): once the BILLING stream no longer holds a part it cannot be
   * delivered again. Bounded per call so the tick stays short; rows another replica is deleting
   * are skipped, not waited for.
   */
  async prune(before: Date, limit: number): Promise<number> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `DELETE FROM billing.usage_flushes WHERE id IN (
         SELECT id FROM billing.usage_flushes WHERE applied_at < $1 ORDER BY applied_at LIMIT $2
            FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [before.toISOString(), limit],
    );
    return rows.length;
  }
}
