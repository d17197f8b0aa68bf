import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Binds the key to the fingerprint if it is new and answers the fingerprint it is bound to.
   * Two statements on purpose: when a concurrent request's insert wins, ours waits for its
   * commit and inserts nothing, and only a new statement's snapshot sees the row it committed.
   * `manager`: in the caller's transaction (an account's creation binds the key it made it under).
   */
  async bind(
    accountId: string,
    key: string,
    fingerprint: string,
    now: Date,
    manager?: EntityManager,
  ): Promise<string> {
    const db = manager ?? this.dataSource;
    const inserted: Array<{ request_hash: string }> = await db.query(
      `INSERT INTO billing.idempotency_keys (account_id, idempotency_key, request_hash, created_at)
       VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, idempotency_key) DO NOTHING
       RETURNING request_hash`,
      [accountId, key, fingerprint, now.toISOString()],
    );
    if (inserted[0]) return inserted[0].request_hash;
    const bound: Array<{ request_hash: string }> = await db.query(
      `SELECT request_hash FROM billing.idempotency_keys
        WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key],
    );
    return bound[0]!.request_hash;
  }
}
