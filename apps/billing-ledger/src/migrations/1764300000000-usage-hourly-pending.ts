import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hourly usage recorded by a usage transaction as one row of arrays, folded into `usage_hourly`
 * later (ADR 0104, "Hourly rollups folded off the usage transaction"): at a fleet's shape the
 * 50,000 rollup upserts of a transaction were ~40 % of its time, and the same (account, hour,
 * network, method) rows were upserted again by every transaction. The columns hold the arrays in
 * their text form (Postgres array literals, as the ledger sends them): the insert parses nothing,
 * the fold casts them. They are compressed with lz4 where Postgres has it: ~4.5 MB of literals
 * for 50,000 rollups take 20 ms and 0.5 MB (of table and WAL) instead of 31–35 ms and 4.7 MB
 * uncompressed, or 40 ms with the default pglz.
 */
export class UsageHourlyPending1764300000000 implements MigrationInterface {
  name = 'UsageHourlyPending1764300000000';

  async up(q: QueryRunner): Promise<void> {
    // lz4 where this Postgres is built with it (packaged and official images are; the embedded
    // Postgres of the local stack is not): else the default, pglz.
    const [{ lz4 }]: Array<{ lz4: boolean }> = await q.query(
      `SELECT coalesce('lz4' = ANY(enumvals), false) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`,
    );
    const text = lz4 ? 'text COMPRESSION lz4' : 'text';
    await q.query(`
      CREATE TABLE billing.usage_hourly_pending (
        id bigserial PRIMARY KEY,
        account_ids ${text} NOT NULL,
        hours ${text} NOT NULL,
        networks ${text} NOT NULL,
        methods ${text} NOT NULL,
        calls ${text} NOT NULL,
        cu ${text} NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Nothing recorded is lost: what waits is folded before the table goes.
    await q.query(`
      INSERT INTO billing.usage_hourly (account_id, hour, network, method, calls, cu)
      SELECT u.account_id, u.hour, u.network, u.method, sum(u.calls), sum(u.cu)
        FROM billing.usage_hourly_pending p,
             unnest(p.account_ids::text[], p.hours::timestamptz[], p.networks::text[], p.methods::text[], p.calls::bigint[], p.cu::bigint[])
               AS u(account_id, hour, network, method, calls, cu)
       GROUP BY 1, 2, 3, 4
      ON CONFLICT (account_id, hour, network, method)
      DO UPDATE SET calls = billing.usage_hourly.calls + EXCLUDED.calls, cu = billing.usage_hourly.cu + EXCLUDED.cu`);
    await q.query(`DROP TABLE billing.usage_hourly_pending`);
  }
}
