import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The attempt log of delivery-worker: one row per attempt (id `<jobId>:<attempt>`), inserted
 * before the request goes out. The row is the attempt's only bill: its 25 CU leave in exactly
 * one usage part (`usage_part`), written in the transaction that builds the part, and the part
 * keeps its id until the stream stored it. A worker killed mid-attempt leaves a row without an
 * outcome, which the next delivery of the job closes as `interrupted` (counted, billed once).
 */
export class DeliveriesInitial1764200000000 implements MigrationInterface {
  name = 'DeliveriesInitial1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE deliveries.attempts (
        id text PRIMARY KEY,
        job_id text NOT NULL,
        attempt integer NOT NULL CHECK (attempt BETWEEN 1 AND 8),
        account_id text NOT NULL,
        webhook_id text NOT NULL,
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        outcome text CHECK (outcome IN ('success', 'failure', 'skipped_breaker_open')),
        billed boolean NOT NULL,
        error_class text,
        status_code integer,
        duration_ms integer,
        error text,
        response_body text,
        usage_part text,
        UNIQUE (job_id, attempt)
      )`);
    await q.query(
      `CREATE INDEX attempts_unbilled ON deliveries.attempts (started_at) WHERE billed AND usage_part IS NULL`,
    );
    await q.query(`
      CREATE TABLE deliveries.usage_parts (
        id text PRIMARY KEY,
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        published_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX usage_parts_unpublished ON deliveries.usage_parts (created_at) WHERE published_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE deliveries.usage_parts`);
    await q.query(`DROP TABLE deliveries.attempts`);
  }
}
