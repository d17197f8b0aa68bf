import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { returning } from '../db/returning';

export interface AddressListRow {
  id: string;
  seq: string;
  account_id: string;
  name: string;
  entry_count: number;
  version: number;
  /** The create's Idempotency-Key and its request's fingerprint (null: none given). */
  idempotency_key: string | null;
  idempotency_request_hash: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Entries are rows (list_id, address): adding, removing and replacing are single set-based
 * statements over unnest'ed arrays, so a 100,000-address change is a few statements, never a
 * rewrite of the list or of other lists. entry_count is kept on the list row in the same
 * transaction; caps read it instead of counting entries.
 */
@Injectable()
export class AddressListsRepository {
  async insert(
    m: EntityManager,
    list: {
      id: string;
      accountId: string;
      name: string;
      idempotencyKey: string | null;
      idempotencyRequestHash: string | null;
      now: Date;
    },
  ): Promise<AddressListRow> {
    const rows: AddressListRow[] = await m.query(
      `INSERT INTO webhooks.address_lists
         (id, account_id, name, idempotency_key, idempotency_request_hash, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING *`,
      [
        list.id,
        list.accountId,
        list.name,
        list.idempotencyKey,
        list.idempotencyRequestHash,
        list.now,
      ],
    );
    return rows[0]!;
  }

  /** The account's list created with this Idempotency-Key (the create holds the account lock). */
  async findByIdempotencyKey(
    m: EntityManager,
    accountId: string,
    key: string,
  ): Promise<AddressListRow | null> {
    const rows: AddressListRow[] = await m.query(
      `SELECT * FROM webhooks.address_lists WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key],
    );
    return rows[0] ?? null;
  }

  async find(
    m: EntityManager,
    accountId: string,
    id: string,
    forUpdate = false,
  ): Promise<AddressListRow | null> {
    const rows: AddressListRow[] = await m.query(
      `SELECT * FROM webhooks.address_lists WHERE id = $1 AND account_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, accountId],
    );
    return rows[0] ?? null;
  }

  async page(
    m: EntityManager,
    accountId: string,
    limit: number,
    before: string | null,
  ): Promise<AddressListRow[]> {
    return m.query(
      `SELECT * FROM webhooks.address_lists WHERE account_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
       ORDER BY seq DESC LIMIT $3`,
      [accountId, before, limit],
    );
  }

  async count(m: EntityManager, accountId: string): Promise<number> {
    const rows: Array<{ n: number }> = await m.query(
      `SELECT count(*)::int AS n FROM webhooks.address_lists WHERE account_id = $1`,
      [accountId],
    );
    return rows[0]!.n;
  }

  /** Entries per list of the account. */
  async sizes(m: EntityManager, accountId: string): Promise<Map<string, number>> {
    const rows: Array<{ id: string; entry_count: number }> = await m.query(
      `SELECT id, entry_count FROM webhooks.address_lists WHERE account_id = $1`,
      [accountId],
    );
    return new Map(rows.map((r) => [r.id, r.entry_count]));
  }

  /** Adds addresses (duplicates ignored); returns how many were new. */
  async addEntries(
    m: EntityManager,
    listId: string,
    addresses: readonly string[],
  ): Promise<number> {
    if (addresses.length === 0) return 0;
    const rows: Array<{ n: number }> = await m.query(
      `WITH added AS (
         INSERT INTO webhooks.address_list_entries (list_id, address)
         SELECT $1, a FROM unnest($2::text[]) AS a ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM added`,
      [listId, addresses],
    );
    return rows[0]!.n;
  }

  async removeEntries(
    m: EntityManager,
    listId: string,
    addresses: readonly string[],
  ): Promise<number> {
    if (addresses.length === 0) return 0;
    const rows: Array<{ n: number }> = await m.query(
      `WITH removed AS (
         DELETE FROM webhooks.address_list_entries WHERE list_id = $1 AND address = ANY($2::text[]) RETURNING 1)
       SELECT count(*)::int AS n FROM removed`,
      [listId, addresses],
    );
    return rows[0]!.n;
  }

  /** Removes every entry not in `keep`; the caller adds `keep` after. */
  async removeAllExcept(
    m: EntityManager,
    listId: string,
    keep: readonly string[],
  ): Promise<number> {
    const rows: Array<{ n: number }> = await m.query(
      `WITH removed AS (
         DELETE FROM webhooks.address_list_entries e WHERE e.list_id = $1
           AND NOT EXISTS (SELECT 1 FROM unnest($2::text[]) AS k(a) WHERE k.a = e.address) RETURNING 1)
       SELECT count(*)::int AS n FROM removed`,
      [listId, keep],
    );
    return rows[0]!.n;
  }

  async entries(
    m: EntityManager,
    listId: string,
    limit: number,
    after: string | null,
    within: { first: string; last: string } | null,
  ): Promise<string[]> {
    const rows: Array<{ address: string }> = await m.query(
      `SELECT address FROM webhooks.address_list_entries WHERE list_id = $1 AND ($2::text IS NULL OR address > $2)
         AND ($4::text IS NULL OR address BETWEEN $4 AND $5)
       ORDER BY address LIMIT $3`,
      [listId, after, limit, within?.first ?? null, within?.last ?? null],
    );
    return rows.map((r) => r.address);
  }

  /** A change of the entries: the new count, version + 1, updated_at. */
  async setCount(
    m: EntityManager,
    listId: string,
    count: number,
    now: Date,
  ): Promise<AddressListRow> {
    const rows = returning<AddressListRow>(
      await m.query(
        `UPDATE webhooks.address_lists SET entry_count = $2, version = version + 1, updated_at = $3 WHERE id = $1 RETURNING *`,
        [listId, count, now],
      ),
    );
    return rows[0]!;
  }

  /** A new list's first entries: part of its creation, so its version stays the first (1). */
  async setInitialCount(m: EntityManager, listId: string, count: number): Promise<AddressListRow> {
    const rows = returning<AddressListRow>(
      await m.query(
        `UPDATE webhooks.address_lists SET entry_count = $2 WHERE id = $1 RETURNING *`,
        [listId, count],
      ),
    );
    return rows[0]!;
  }

  async rename(m: EntityManager, listId: string, name: string, now: Date): Promise<AddressListRow> {
    const rows = returning<AddressListRow>(
      await m.query(
        `UPDATE webhooks.address_lists SET name = $2, version = version + 1, updated_at = $3 WHERE id = $1 RETURNING *`,
        [listId, name, now],
      ),
    );
    return rows[0]!;
  }

  /** Non-deleted webhooks that reference the list. */
  async referencingWebhooks(m: EntityManager, listId: string): Promise<string[]> {
    const rows: Array<{ webhook_id: string }> = await m.query(
      `SELECT webhook_id FROM webhooks.webhook_list_refs WHERE list_id = $1 ORDER BY webhook_id`,
      [listId],
    );
    return rows.map((r) => r.webhook_id);
  }

  async delete(m: EntityManager, listId: string): Promise<void> {
    await m.query(`DELETE FROM webhooks.address_lists WHERE id = $1`, [listId]);
  }
}
