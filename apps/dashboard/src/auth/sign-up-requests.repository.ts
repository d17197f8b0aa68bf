import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Queryable } from './users.repository';

/** A sign-up's billing request as first sent: its `Idempotency-Key` and body. */
export interface SignUpRequest<Body> {
  idempotencyKey: string;
  body: Body;
}

/**
 * `dashboard.sign_up_requests` (ADR 0601 amendment): the request for a billing account that a
 * self-service sign-up of an email sends, kept until its user row is written.
 */
@Injectable()
export class SignUpRequestsRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * The email's pending request, or this one stored as it. On the pool, so it is committed
   * before billing is asked and outlives the sign-up's transaction: the next sign-up of the
   * email sends the same request, whatever became of this one.
   */
  async pendingOr<Body>(
    email: string,
    request: SignUpRequest<Body>,
    now: Date,
  ): Promise<SignUpRequest<Body>> {
    await this.db.query(
      `INSERT INTO dashboard.sign_up_requests (email, idempotency_key, body, created_at)
       VALUES (lower($1), $2, $3, $4) ON CONFLICT (email) DO NOTHING`,
      [email, request.idempotencyKey, JSON.stringify(request.body), now],
    );
    const [row] = (await this.db.query(
      `SELECT idempotency_key, body FROM dashboard.sign_up_requests WHERE email = lower($1)`,
      [email],
    )) as Array<{ idempotency_key: string; body: Body }>;
    return { idempotencyKey: row!.idempotency_key, body: row!.body };
  }

  /** The email's request replaced by a new one (billing refused the stored one as another). */
  async replace<Body>(email: string, request: SignUpRequest<Body>, now: Date): Promise<void> {
    await this.db.query(
      `UPDATE dashboard.sign_up_requests SET idempotency_key = $2, body = $3, created_at = $4
        WHERE email = lower($1)`,
      [email, request.idempotencyKey, JSON.stringify(request.body), now],
    );
  }

  /** The email's request answered and its user written (`db`: the user row's transaction). */
  async done(db: Queryable, email: string): Promise<void> {
    await db.query(`DELETE FROM dashboard.sign_up_requests WHERE email = lower($1)`, [email]);
  }
}
