import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The management side of the `webhooks` schema: account facts (the per-account lock row),
 * webhooks, address lists and their entries, list references, status history, and the change
 * feed the matcher's index follows (one row per changing transaction, see WEBHOOKS.md).
 *
 * List entries are one row per (list, address) so a list grows or shrinks by bulk statements
 * (unnest … ON CONFLICT DO NOTHING, DELETE … = ANY) without rewriting the list; per-list counts
 * are kept on the list row in the same transaction, so caps never re-count a million rows.
 */
export class WebhooksInitial1764100000000 implements MigrationInterface {
  name = 'WebhooksInitial1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.accounts (
      account_id text PRIMARY KEY,
      plan_id text,
      account_type text NOT NULL DEFAULT 'individual',
      node_owner boolean NOT NULL DEFAULT false,
      caps jsonb NOT NULL,
      balance_state text NOT NULL DEFAULT 'ok',
      exhausted_since timestamptz,
      pending_top_up_cu bigint NOT NULL DEFAULT 0,
      version bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE webhooks.webhooks (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      account_id text NOT NULL,
      name text,
      status text NOT NULL,
      chain text NOT NULL,
      network text NOT NULL,
      trigger_type text NOT NULL,
      filters jsonb,
      addresses text[] NOT NULL DEFAULT '{}',
      list_refs text[] NOT NULL DEFAULT '{}',
      filter_tree jsonb NOT NULL,
      inline_address_count integer NOT NULL,
      confirm_depth integer NOT NULL,
      phases text[] NOT NULL,
      target_url text NOT NULL,
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      version integer NOT NULL DEFAULT 1,
      published_version integer NOT NULL DEFAULT 0,
      idempotency_key text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`);
    await q.query(
      `CREATE INDEX webhooks_account_newest ON webhooks.webhooks (account_id, seq DESC) WHERE status <> 'deleted'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX webhooks_idempotency ON webhooks.webhooks (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX webhooks_unpublished ON webhooks.webhooks (id) WHERE version > published_version`,
    );
    await q.query(`CREATE TABLE webhooks.address_lists (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      account_id text NOT NULL,
      name text NOT NULL,
      entry_count integer NOT NULL DEFAULT 0,
      version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
    await q.query(
      `CREATE INDEX address_lists_account ON webhooks.address_lists (account_id, seq DESC)`,
    );
    await q.query(`CREATE TABLE webhooks.address_list_entries (
      list_id text NOT NULL REFERENCES webhooks.address_lists (id) ON DELETE CASCADE,
      address text NOT NULL,
      PRIMARY KEY (list_id, address)
    )`);
    await q.query(
      `CREATE INDEX address_list_entries_address ON webhooks.address_list_entries (address)`,
    );
    await q.query(`CREATE TABLE webhooks.webhook_list_refs (
      webhook_id text NOT NULL REFERENCES webhooks.webhooks (id) ON DELETE CASCADE,
      list_id text NOT NULL REFERENCES webhooks.address_lists (id),
      PRIMARY KEY (webhook_id, list_id)
    )`);
    await q.query(`CREATE INDEX webhook_list_refs_list ON webhooks.webhook_list_refs (list_id)`);
    await q.query(`CREATE TABLE webhooks.status_history (
      id bigserial PRIMARY KEY,
      webhook_id text NOT NULL,
      account_id text NOT NULL,
      from_status text,
      to_status text NOT NULL,
      trigger text NOT NULL,
      actor text NOT NULL,
      drop_reason text,
      at timestamptz NOT NULL
    )`);
    await q.query(
      `CREATE INDEX status_history_webhook ON webhooks.status_history (webhook_id, id DESC)`,
    );
    await q.query(`CREATE TABLE webhooks.change_log (
      seq bigserial PRIMARY KEY,
      xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      account_id text NOT NULL,
      webhook_id text,
      list_id text,
      at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'change_log',
      'status_history',
      'webhook_list_refs',
      'address_list_entries',
      'address_lists',
      'webhooks',
      'accounts',
    ])
      await q.query(`DROP TABLE webhooks.${table}`);
  }
}
