import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Binds the key to the fingerprint if it is new and answers the fingerprint it is bound to,
   * what its first use made (`result_id`, null until `recordResult`) and whether this call bound
   * it. Two statements on purpose: when a concurrent request's insert wins, ours waits for its
   * commit and inserts nothing, and only a new statement's snapshot sees the row it committed.
   * `manager`: in the caller's transaction (an account's creation binds the key it made it
   * under; a credential's creation binds it before it makes the credential, so a concurrent
   * request with the key waits here until that commit and then finds the credential).
   */
  async bind(
    accountId: string,
    key: string,
    fingerprint: string,
    now: Date,
    manager?: EntityManager,
  ): Promise<{ requestHash: string; resultId: string | null; first: boolean }> {
    const db = manager ?? this.dataSource;
    const inserted: Array<{ request_hash: string }> = await db.query(
      `INSERT INTO billing.idempotency_keys (account_id, idempotency_key, request_hash, created_at)
       VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, idempotency_key) DO NOTHING
       RETURNING request_hash`,
      [accountId, key, fingerprint, now.toISOString()],
    );
    if (inserted[0]) return { requestHash: inserted[0].request_hash, resultId: null, first: true };
    const bound: Array<{ request_hash: string; result_id: string | null }> = await db.query(
      `SELECT request_hash, result_id FROM billing.idempotency_keys
        WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key],
    );
    return { requestHash: bound[0]!.request_hash, resultId: bound[0]!.result_id, first: false };
  }

  /** The id of what the key's first use made (caller's transaction, the one that bound it). */
  async recordResult(
    manager: EntityManager,
    accountId: string,
    key: string,
    resultId: string,
  ): Promise<void> {
    await manager.query(
      `UPDATE billing.idempotency_keys SET result_id = $3
        WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key, resultId],
    );
  }
}
