import type { DataSource, EntityManager } from 'typeorm';
import type { SecretKeyRing } from './secret-box-ring';

/**
 * The rows of one table holding a value not sealed under the current key. `stale` is a SQL
 * condition over the row in which `$1` is the current key's prefix (`v2.<key id>.`).
 */
export interface StaleRowsQuery {
  /** The table, schema-qualified; its key column is `id` (text, ordered). */
  table: string;
  /** The columns a reseal reads, `id` first. */
  columns: string;
  stale: string;
}

/** What the passes run against: a reseal command's own dependencies. */
export interface ResealPassesDeps {
  dataSource: DataSource;
  /** Values under its current key (`currentPrefix`) are not read. */
  ring: Pick<SecretKeyRing, 'currentPrefix'>;
  /** Rows per transaction (default 200). */
  batchSize?: number;
}

/**
 * Seals one locked row again and stores it through `m`; false when the ring cannot open it (the
 * caller reports it): the row is not tried again in this run.
 */
export type ResealRow<Row> = (m: EntityManager, row: Row) => Promise<boolean>;

const BATCH = 200;

/**
 * Up to `limit` stale rows after `afterId` (id order), locked until the transaction ends. Rows
 * another transaction holds (a rotation, another run) are skipped, not waited for, so runs at
 * once take disjoint rows; with `waitForHeld` they are waited for instead, and a row that other
 * transaction resealed is stale no more when it commits (Postgres checks the condition again on
 * the row it then locks), so it is not returned.
 */
export function lockStaleRows<Row>(
  m: EntityManager,
  query: StaleRowsQuery,
  currentPrefix: string,
  afterId: string,
  limit: number,
  waitForHeld = false,
): Promise<Row[]> {
  return m.query(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE (${query.stale}) AND id > $2
      ORDER BY id
      LIMIT $3
        FOR UPDATE${waitForHeld ? '' : ' SKIP LOCKED'}`,
    [currentPrefix, afterId, limit],
  );
}

/**
 * The reseal command's loop (ADR 0424, 0603): passes over the table in transactions of
 * `batchSize` locked rows (`staleRows`), each row handed to `reseal`, until a pass reseals
 * nothing more (rows skipped while another held them come back in the next pass). That last pass
 * waits for the rows another run still holds rather than skipping them, so when the loop ends no
 * stale row is left in flight: a run that finished first would otherwise count, as left, a row
 * the other run was resealing (seen: two runs at once, one reported `left: 1`). A row `reseal`
 * could not open is remembered and skipped, so a run ends however many such rows there are.
 */
export async function resealPasses<Row extends { id: string }>(
  deps: ResealPassesDeps,
  staleRows: StaleRowsQuery,
  reseal: ResealRow<Row>,
): Promise<void> {
  const { dataSource, ring, batchSize = BATCH } = deps;
  const failed = new Set<string>();
  let waitForHeld = false;
  for (;;) {
    let progressed = 0;
    let after = '';
    for (;;) {
      const batch = await dataSource.transaction(async (m) => {
        const rows = await lockStaleRows<Row>(
          m,
          staleRows,
          ring.currentPrefix,
          after,
          batchSize,
          waitForHeld,
        );
        for (const row of rows) {
          if (failed.has(row.id)) continue;
          if (await reseal(m, row)) progressed += 1;
          else failed.add(row.id);
        }
        return rows;
      });
      if (batch.length === 0) break;
      after = batch.at(-1)!.id;
    }
    if (progressed > 0) waitForHeld = false;
    else if (waitForHeld) return;
    else waitForHeld = true;
  }
}
