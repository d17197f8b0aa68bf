import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The journal → account and entry → journal foreign keys go (ADR 0104, "References proven, not
 * triggered"). Postgres checks a foreign key by a trigger per inserted row, each a lookup that
 * takes a key-share lock on the referenced row: at a fleet's shape 30,000 of them a usage
 * transaction (10,000 journals, 20,000 entries), ~150 ms of its ~0.9 s (the journal statement
 * 260–350 ms with them, ~150 ms without, measured alone). What they guarded holds by
 * construction — every journal is written by the statement that writes its entries from the
 * journal rows it returns, for an account whose balance row (itself a foreign key to the
 * account) the transaction holds locked, and no account is ever deleted — and `checkLedger`
 * proves it: it reports entries without their journal and journals without their account.
 */
export class LedgerReferencesChecked1764400000000 implements MigrationInterface {
  name = 'LedgerReferencesChecked1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.ledger_entries DROP CONSTRAINT ledger_entries_journal_id_fkey`,
    );
    await q.query(
      `ALTER TABLE billing.ledger_journal DROP CONSTRAINT ledger_journal_account_id_fkey`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.ledger_journal ADD CONSTRAINT ledger_journal_account_id_fkey FOREIGN KEY (account_id) REFERENCES billing.accounts (id)`,
    );
    await q.query(
      `ALTER TABLE billing.ledger_entries ADD CONSTRAINT ledger_entries_journal_id_fkey FOREIGN KEY (journal_id) REFERENCES billing.ledger_journal (id)`,
    );
  }
}
