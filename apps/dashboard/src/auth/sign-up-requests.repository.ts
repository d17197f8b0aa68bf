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
   * email sends the same request, whatever became of this one. Called before the sign-up takes
   * its claim (`UsersRepository.withEmailClaimed`), never inside it: a second pool connection
   * wanted while the claim holds one deadlocks a full pool (QA H1).
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
    // Gone between the two: a sign-up of the email finished (its user written, the request
    // deleted); this one is answered `email_taken` under the claim and sends nothing.
    if (!row) return request;
    return { idempotencyKey: row.idempotency_key, body: row.body };
  }

  /**
   * The email's request `refused` replaced by `request` (billing refused the stored one as
   * another), then the email's pending request as `pendingOr` reads it: racing replacements
   * leave one request, which all of them send. On the pool, outside any claim (as `pendingOr`).
   */
  async replace<Body>(
    email: string,
    refused: string,
    request: SignUpRequest<Body>,
    now: Date,
  ): Promise<SignUpRequest<Body>> {
    await this.db.query(
      `UPDATE dashboard.sign_up_requests SET idempotency_key = $3, body = $4, created_at = $5
        WHERE email = lower($1) AND idempotency_key = $2`,
      [email, refused, request.idempotencyKey, JSON.stringify(request.body), now],
    );
    return this.pendingOr(email, request, now);
  }

  /** The email's request answered and its user written (`db`: the user row's transaction). */
  async done(db: Queryable, email: string): Promise<void> {
    await db.query(`DELETE FROM dashboard.sign_up_requests WHERE email = lower($1)`, [email]);
  }
}
