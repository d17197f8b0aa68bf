import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Labels, address records, sanction records, verdict cache and audit quota usage. */
export class AuditInitial1763740000000 implements MigrationInterface {
  name = 'AuditInitial1763740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE audit.labels (
      id bigserial PRIMARY KEY,
      pack text NOT NULL,
      chain text NOT NULL,
      address text NOT NULL,
      category text NOT NULL,
      name text,
      url text,
      source_date date,
      extra jsonb,
      loaded_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT labels_pack_chain_address_category UNIQUE (pack, chain, address, category)
    )`);
    await q.query(`CREATE INDEX labels_address ON audit.labels (address)`);
    await q.query(
      `CREATE INDEX labels_canonical_symbol ON audit.labels (chain, lower(extra->>'symbol')) WHERE category = 'canonical_token'`,
    );
    await q.query(
      `CREATE INDEX labels_canonical_name ON audit.labels (chain, lower(name)) WHERE category = 'canonical_token'`,
    );
    await q.query(`CREATE TABLE audit.address_records (
      id serial PRIMARY KEY,
      chain text NOT NULL,
      address text NOT NULL,
      checked_times integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      last_checked timestamptz NOT NULL,
      CONSTRAINT address_records_chain_address UNIQUE (chain, address)
    )`);
    await q.query(`CREATE TABLE audit.sanction_records (
      id serial PRIMARY KEY,
      trustscore_id integer NOT NULL REFERENCES audit.address_records (id) ON DELETE CASCADE,
      source_key text NOT NULL,
      category text,
      name text,
      description text,
      url text,
      is_sanctioned boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT sanction_records_trustscore_source UNIQUE (trustscore_id, source_key)
    )`);
    await q.query(`CREATE TABLE audit.verdicts (
      chain text NOT NULL,
      address text NOT NULL,
      product text NOT NULL,
      verdict jsonb NOT NULL,
      computed_at timestamptz NOT NULL,
      PRIMARY KEY (chain, address, product)
    )`);
    await q.query(`CREATE TABLE audit.quota_usage (
      account_id text NOT NULL,
      window_start timestamptz NOT NULL,
      used integer NOT NULL,
      PRIMARY KEY (account_id, window_start)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'quota_usage',
      'verdicts',
      'sanction_records',
      'address_records',
      'labels',
    ])
      await q.query(`DROP TABLE audit.${table}`);
  }
}
