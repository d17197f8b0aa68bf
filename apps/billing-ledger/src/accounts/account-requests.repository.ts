import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** The account an `Idempotency-Key` of `POST /admin/accounts` made, and its answer's key. */
export interface AccountRequestRow {
  accountId: string;
  apiKeyId: string;
}

/** `billing.account_requests` (migration `1765700000000-account-requests`). */
@Injectable()
export class AccountRequestsRepository {
  /**
   * Holds the key until the caller's transaction ends: requests with one key (two repeats at
   * once, or a first use and its repeat) run one after the other, so the key makes one account
   * and each answer's key is revoked only by a later answer.
   */
  async lock(manager: EntityManager, key: string): Promise<void> {
    await manager.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('billing.account-request:' || $1, 0))`,
      [key],
    );
  }

  async find(manager: EntityManager, key: string): Promise<AccountRequestRow | undefined> {
    const rows: Array<{ account_id: string; api_key_id: string }> = await manager.query(
      `SELECT account_id, api_key_id FROM billing.account_requests WHERE idempotency_key = $1`,
      [key],
    );
    return rows[0] && { accountId: rows[0].account_id, apiKeyId: rows[0].api_key_id };
  }

  async insert(
    manager: EntityManager,
    key: string,
    row: AccountRequestRow,
    now: Date,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO billing.account_requests
         (idempotency_key, account_id, api_key_id, created_at, answered_at)
       VALUES ($1, $2, $3, $4, $4)`,
      [key, row.accountId, row.apiKeyId, now.toISOString()],
    );
  }

  /** The key the latest answer to the request carried. */
  async answered(manager: EntityManager, key: string, apiKeyId: string, now: Date): Promise<void> {
    await manager.query(
      `UPDATE billing.account_requests SET api_key_id = $2, answered_at = $3
        WHERE idempotency_key = $1`,
      [key, apiKeyId, now.toISOString()],
    );
  }
}
