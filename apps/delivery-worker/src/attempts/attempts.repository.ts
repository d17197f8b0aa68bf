import type { DeliveryErrorClass, DeliveryHealth } from '@meridian/contracts';
import type { DataSource } from 'typeorm';

export interface AttemptRow {
  id: string;
  jobId: string;
  attempt: number;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: DeliveryHealth['outcome'] | null;
  billed: boolean;
  errorClass: DeliveryErrorClass | null;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  responseBody: string | null;
}

export interface AttemptStart {
  id: string;
  jobId: string;
  attempt: number;
  accountId: string;
  webhookId: string;
  startedAt: Date;
  billed: boolean;
}

export interface AttemptFinish {
  outcome: DeliveryHealth['outcome'];
  finishedAt: Date;
  errorClass?: DeliveryErrorClass;
  statusCode?: number;
  durationMs?: number;
  error?: string;
  responseBody?: string;
}

interface RawAttempt {
  id: string;
  job_id: string;
  attempt: number;
  started_at: Date;
  finished_at: Date | null;
  outcome: DeliveryHealth['outcome'] | null;
  billed: boolean;
  error_class: DeliveryErrorClass | null;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
}

function toRow(r: RawAttempt): AttemptRow {
  return {
    id: r.id,
    jobId: r.job_id,
    attempt: r.attempt,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    outcome: r.outcome,
    billed: r.billed,
    errorClass: r.error_class,
    statusCode: r.status_code,
    durationMs: r.duration_ms,
    error: r.error,
    responseBody: r.response_body,
  };
}

/** The attempt log (deliveries.attempts): the record of what was attempted and billed. */
export class AttemptsRepository {
  constructor(private readonly db: DataSource) {}

  /** The job's latest attempt, if any. */
  async latest(jobId: string): Promise<AttemptRow | undefined> {
    const rows: RawAttempt[] = await this.db.query(
      `SELECT id, job_id, attempt, started_at, finished_at, outcome, billed, error_class,
              status_code, duration_ms, error, response_body
         FROM deliveries.attempts WHERE job_id = $1 ORDER BY attempt DESC LIMIT 1`,
      [jobId],
    );
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /**
   * Claims an attempt before it is made. False when the row exists (another delivery of the
   * same job claimed it): the caller re-reads instead of attempting (and billing) twice.
   */
  async claim(start: AttemptStart, finish?: AttemptFinish): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO deliveries.attempts
         (id, job_id, attempt, account_id, webhook_id, started_at, billed,
          outcome, finished_at, error_class, status_code, duration_ms, error, response_body)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        start.id,
        start.jobId,
        start.attempt,
        start.accountId,
        start.webhookId,
        start.startedAt,
        start.billed,
        finish?.outcome ?? null,
        finish?.finishedAt ?? null,
        finish?.errorClass ?? null,
        finish?.statusCode ?? null,
        finish?.durationMs ?? null,
        finish?.error ?? null,
        finish?.responseBody ?? null,
      ],
    );
    return rows.length === 1;
  }

  async finish(id: string, finish: AttemptFinish): Promise<void> {
    await this.db.query(
      `UPDATE deliveries.attempts
          SET outcome = $2, finished_at = $3, error_class = $4, status_code = $5,
              duration_ms = $6, error = $7, response_body = $8
        WHERE id = $1 AND outcome IS NULL`,
      [
        id,
        finish.outcome,
        finish.finishedAt,
        finish.errorClass ?? null,
        finish.statusCode ?? null,
        finish.durationMs ?? null,
        finish.error ?? null,
        finish.responseBody ?? null,
      ],
    );
  }
}
