import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, credentials (hashes only), the double-entry CU ledger, top-ups, hourly usage rollups
 * and the outbox of events that must not be lost (plan changes, revocations, cleared top-ups).
 */
export class BillingInitial1763740800000 implements MigrationInterface {
  name = 'BillingInitial1763740800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing.accounts (
        id text PRIMARY KEY,
        name text NOT NULL,
        type text NOT NULL CHECK (type IN ('individual', 'team')),
        plan_id text NULL,
        node_owner boolean NOT NULL DEFAULT false,
        contract jsonb NULL,
        plan_started_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    // Running sums of the ledger per account (a cache of sum(entries), proven by ledger-check).
    await q.query(`
      CREATE TABLE billing.balances (
        account_id text PRIMARY KEY REFERENCES billing.accounts (id),
        allowance_cu bigint NOT NULL DEFAULT 0,
        purchased_cu bigint NOT NULL DEFAULT 0,
        pending_cu bigint NOT NULL DEFAULT 0,
        allowance_total_cu bigint NOT NULL DEFAULT 0,
        period_start timestamptz NULL,
        period_end timestamptz NULL,
        exhausted_since timestamptz NULL,
        version bigint NOT NULL DEFAULT 1,
        published_version bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX balances_unpublished ON billing.balances (account_id) WHERE published_version < version`,
    );
    await q.query(`CREATE INDEX balances_period_end ON billing.balances (period_end)`);
    await q.query(`
      CREATE TABLE billing.ledger_journal (
        id bigserial PRIMARY KEY,
        idempotency_key text NOT NULL,
        account_id text NOT NULL REFERENCES billing.accounts (id),
        kind text NOT NULL CHECK (kind IN ('usage', 'allowance_reset', 'plan_change', 'topup_created', 'topup_cleared')),
        amount_cu bigint NOT NULL,
        overdraft_cu bigint NOT NULL DEFAULT 0,
        occurred_at timestamptz NOT NULL,
        detail jsonb NULL,
        CONSTRAINT ledger_journal_idempotency_key UNIQUE (idempotency_key)
      )`);
    await q.query(`
      CREATE TABLE billing.ledger_entries (
        id bigserial PRIMARY KEY,
        journal_id bigint NOT NULL REFERENCES billing.ledger_journal (id),
        account_id text NOT NULL,
        ledger text NOT NULL CHECK (ledger IN ('allowance', 'purchased', 'pending', 'allowance_source', 'allowance_expired', 'topup_source', 'usage')),
        amount_cu bigint NOT NULL CHECK (amount_cu <> 0)
      )`);
    await q.query(
      `CREATE INDEX ledger_entries_account ON billing.ledger_entries (account_id, ledger)`,
    );
    await q.query(`CREATE INDEX ledger_entries_journal ON billing.ledger_entries (journal_id)`);
    await q.query(`
      CREATE TABLE billing.api_keys (
        seq bigserial UNIQUE,
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES billing.accounts (id),
        name text NOT NULL,
        key_hash char(64) NOT NULL UNIQUE,
        key_hint text NOT NULL,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX api_keys_account ON billing.api_keys (account_id, seq)`);
    await q.query(`
      CREATE TABLE billing.access_tokens (
        seq bigserial UNIQUE,
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES billing.accounts (id),
        network text NOT NULL,
        name text NOT NULL,
        token_hash char(64) NOT NULL UNIQUE,
        token_hint text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz NULL,
        revoked_reason text NULL
      )`);
    await q.query(`CREATE INDEX access_tokens_account ON billing.access_tokens (account_id, seq)`);
    await q.query(`
      CREATE TABLE billing.top_ups (
        seq bigserial UNIQUE,
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES billing.accounts (id),
        cu bigint NOT NULL CHECK (cu > 0),
        source text NOT NULL CHECK (source IN ('account', 'operator')),
        request_key text NULL,
        status text NOT NULL CHECK (status IN ('pending', 'cleared')),
        created_at timestamptz NOT NULL,
        clears_at timestamptz NOT NULL,
        cleared_at timestamptz NULL,
        CONSTRAINT top_ups_request_key UNIQUE (account_id, request_key)
      )`);
    await q.query(
      `CREATE INDEX top_ups_due ON billing.top_ups (clears_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX top_ups_account ON billing.top_ups (account_id, seq)`);
    await q.query(`
      CREATE TABLE billing.usage_hourly (
        account_id text NOT NULL,
        hour timestamptz NOT NULL,
        network text NOT NULL,
        method text NOT NULL,
        calls bigint NOT NULL,
        cu bigint NOT NULL,
        PRIMARY KEY (account_id, hour, network, method)
      )`);
    await q.query(`
      CREATE TABLE billing.outbox (
        id bigserial PRIMARY KEY,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        published_at timestamptz NULL
      )`);
    await q.query(
      `CREATE INDEX outbox_unpublished ON billing.outbox (id) WHERE published_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'outbox',
      'usage_hourly',
      'top_ups',
      'access_tokens',
      'api_keys',
      'ledger_entries',
      'ledger_journal',
      'balances',
      'accounts',
    ]) {
      await q.query(`DROP TABLE IF EXISTS billing.${table}`);
    }
  }
}
