/** What the index helpers need of a migration's `QueryRunner` (or a DataSource). */
export interface IndexQueryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** An index of a table in the app's schema, as `CREATE INDEX` names it. */
export interface ConcurrentIndex {
  schema: string;
  name: string;
  /** The table and what it indexes, after `ON <schema>.`: `attempts (started_at) WHERE …`. */
  on: string;
  unique?: boolean;
}

/**
 * Builds an index without blocking the table's writes (`CONCURRENTLY`, so the migration sets
 * `transaction = false`). A build that failed (a crash, a duplicate under a unique index) leaves
 * an INVALID index behind, which `IF NOT EXISTS` would keep for ever unused; it is dropped and
 * built again, so a migration run again after a failure finishes the job.
 */
export async function createIndexConcurrently(
  q: IndexQueryable,
  index: ConcurrentIndex,
): Promise<void> {
  const invalid = (await q.query(
    `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = $2 AND NOT i.indisvalid`,
    [index.schema, index.name],
  )) as unknown[];
  if (invalid.length > 0) await dropIndexConcurrently(q, index);
  await q.query(
    `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY IF NOT EXISTS ${index.name}
       ON ${index.schema}.${index.on}`,
  );
}

/** Drops an index, if there is one, without blocking the table's writes. */
export async function dropIndexConcurrently(
  q: IndexQueryable,
  index: Pick<ConcurrentIndex, 'schema' | 'name'>,
): Promise<void> {
  await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.schema}.${index.name}`);
}
