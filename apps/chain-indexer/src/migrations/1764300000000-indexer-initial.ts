import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per network: the cursor (last block published as canonical) and the window of recent block
 * hashes the reorg check walks back through. `generation` counts handled reorgs (it goes into
 * message ids); `leader_revision` fences a replica that lost its lease without noticing.
 */
export class IndexerInitial1764300000000 implements MigrationInterface {
  name = 'IndexerInitial1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE indexer.cursors (
        network text PRIMARY KEY,
        head_number bigint NOT NULL CHECK (head_number >= 0),
        head_hash text NOT NULL,
        generation integer NOT NULL DEFAULT 0,
        leader_revision bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE indexer.blocks (
        network text NOT NULL,
        number bigint NOT NULL,
        hash text NOT NULL,
        parent_hash text NOT NULL,
        timestamp bigint NOT NULL,
        PRIMARY KEY (network, number)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE indexer.blocks');
    await q.query('DROP TABLE indexer.cursors');
  }
}
