import type { DeliveryErrorClass, DeliveryHealth } from '@meridian/contracts';
import { StatementBatcher, type StatementBatcherOptions } from '@meridian/platform-db';
import { MAX_DELIVERY_ATTEMPTS } from '@meridian/webhooks';
import type { DataSource } from 'typeorm';

export interface AttemptRow {
  id: string;
  jobId: string;
  attempt: number;
  /**
   * The slot of its event's budget this attempt took (`event_attempt`, 1–8, counted across the
   * event's deliveries); null for an attempt made before the budget existed.
   */
  slot: number | null;
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
  /**
   * The event's attempt budget this attempt spends (`eventAttemptsKey`: webhook + event, and a
   * replay's stamp): spec "one event is attempted at most 8 times", across its deliveries.
   */
  eventKey: string;
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
  event_attempt: number | null;
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
    slot: r.event_attempt,
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

/**
 * The rows of a shared statement travel as one JSON parameter (`json_to_recordset`): one
 * native JSON.stringify instead of an escaped text array per column, which cost the worker more
 * CPU than the statement's round trip. Absent keys are NULL; dates are ISO strings.
 */
const ROW_TYPE = `id text, job_id text, attempt int, account_id text, webhook_id text,
  started_at timestamptz, billed boolean, outcome text, finished_at timestamptz,
  error_class text, status_code int, duration_ms int, error text, response_body text`;

function finishColumns(f: AttemptFinish): Record<string, unknown> {
  return {
    outcome: f.outcome,
    finished_at: f.finishedAt,
    error_class: f.errorClass,
    status_code: f.statusCode,
    duration_ms: f.durationMs,
    error: f.error,
    response_body: f.responseBody,
  };
}

/**
 * A claim's result: `{slot}` (won: the row is in with that slot of its event, attempt it),
 * `lost` (another delivery of the job, or of the same event at the same moment, took the id or
 * the event's slot: look again), `spent` (the event's 8 attempts are taken by its deliveries:
 * give up, nothing recorded or billed).
 */
export type Claim = { slot: number } | 'lost' | 'spent';

/** A write of the attempt log: a claim (a new row, maybe with its outcome) or an outcome. */
type Write =
  | { claim: AttemptStart; finish: AttemptFinish | undefined }
  | { claim: undefined; id: string; finish: AttemptFinish };

const CLAIM_COLUMNS = `id, job_id, attempt, account_id, webhook_id, started_at, billed,
  outcome, finished_at, error_class, status_code, duration_ms, error, response_body`;

/**
 * The INSERT of the claims ($1), each with the event's next attempt slot (`event_attempt`, 1–8,
 * unique per `event_key`): the highest slot taken plus the claim's rank among this statement's
 * claims of the event. A claim past slot 8 is not inserted (`spent`). Two statements taking the
 * same slot at once (two deliveries of one event in two workers) meet on the unique index: the
 * second waits for the first and inserts nothing (`lost`), so an event never has more than 8.
 * A claim is won when its id comes back.
 */
const claimsStatement = (param: string) => `WITH x AS (
    SELECT c.*, COALESCE((SELECT max(a.event_attempt) FROM deliveries.attempts a
                           WHERE a.event_key = c.event_key), 0)
                + row_number() OVER (PARTITION BY c.event_key ORDER BY c.ord) AS slot
      FROM json_to_recordset(${param}::json) AS c(${ROW_TYPE}, event_key text, ord int)
     WHERE NOT EXISTS (SELECT 1 FROM deliveries.attempts a WHERE a.id = c.id)),
  won AS (
    INSERT INTO deliveries.attempts (${CLAIM_COLUMNS}, event_key, event_attempt)
    SELECT ${CLAIM_COLUMNS}, event_key, slot FROM x WHERE slot <= ${MAX_DELIVERY_ATTEMPTS}
    ON CONFLICT DO NOTHING RETURNING id)
  SELECT x.id, x.slot::int AS slot, won.id IS NOT NULL AS won,
         x.slot > ${MAX_DELIVERY_ATTEMPTS} AS spent
    FROM x LEFT JOIN won ON won.id = x.id`;
const INSERT_CLAIMS = claimsStatement('$1');

/** The UPDATE of the outcomes ($n); a row already finished keeps its first outcome. */
const updateFinishes = (param: string) => `UPDATE deliveries.attempts a
  SET outcome = u.outcome, finished_at = u.finished_at, error_class = u.error_class,
      status_code = u.status_code, duration_ms = u.duration_ms, error = u.error,
      response_body = u.response_body
  FROM json_to_recordset(${param}::json) AS u(${ROW_TYPE})
  WHERE a.id = u.id AND a.outcome IS NULL`;

/**
 * Claims and outcomes of one turn in one statement: the UPDATE as a data-modifying CTE (run
 * once whether or not the INSERT reads it), then the INSERT. They never touch one row: an
 * outcome is written only after its row's claim committed.
 */
const CLAIMS_AND_FINISHES = claimsStatement('$1').replace(
  'WITH x AS (',
  `WITH finished AS (${updateFinishes('$2')} RETURNING 1), x AS (`,
);

/**
 * The attempt log (deliveries.attempts): the record of what was attempted and billed.
 *
 * The handlers in flight share their statements (StatementBatcher): one SELECT for the latest
 * attempts of many jobs; and one statement for the writes, the claims (a multi-row INSERT … ON
 * CONFLICT DO NOTHING) and the outcomes (an UPDATE … FROM json_to_recordset) submitted while
 * the last one ran, one round trip and one commit for both. A caller's promise settles only once
 * the statement carrying its row committed, so an attempt is still claimed (and billed) before
 * its request goes out, and a kill -9 loses nothing a single-row statement would have kept.
 */
export class AttemptsRepository {
  private readonly latestReads: StatementBatcher<string, AttemptRow | undefined>;
  private readonly writes: StatementBatcher<Write, Claim | undefined>;

  constructor(
    private readonly db: DataSource,
    options: StatementBatcherOptions = {},
  ) {
    this.latestReads = new StatementBatcher((ids) => this.latestOf(ids), options);
    this.writes = new StatementBatcher((items) => this.writeAll(items), options);
  }

  /** The job's latest attempt, if any. */
  latest(jobId: string): Promise<AttemptRow | undefined> {
    return this.latestReads.submit(jobId);
  }

  /**
   * Claims an attempt before it is made, in its event's budget of 8. `lost` when the row exists
   * (another delivery of the same job claimed it) or the event's slot was taken at the same
   * moment: the caller re-reads instead of attempting (and billing) twice. `spent` when the
   * event's 8 attempts are taken (by this or its other deliveries).
   */
  async claim(start: AttemptStart, finish?: AttemptFinish): Promise<Claim> {
    return (await this.writes.submit({ claim: start, finish }))!;
  }

  /** Records an attempt's outcome; a row already finished keeps its first outcome. */
  finish(id: string, finish: AttemptFinish): Promise<void> {
    return this.writes.submit({
      claim: undefined,
      id,
      finish,
    }) as Promise<unknown> as Promise<void>;
  }

  /**
   * Deletes up to `limit` attempts that started before `before`, oldest first; the count
   * deleted. An attempt still waiting for its usage part (billed, not yet stamped) is kept
   * whatever its age: the row is its bill. Rows another replica is deleting are skipped.
   */
  async prune(before: Date, limit: number): Promise<number> {
    const [{ deleted }]: { deleted: number }[] = await this.db.query(
      `WITH gone AS (
         DELETE FROM deliveries.attempts WHERE id IN (
           SELECT id FROM deliveries.attempts
            WHERE started_at < $1 AND NOT (billed AND usage_part IS NULL)
            ORDER BY started_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS deleted FROM gone`,
      [before, limit],
    );
    return deleted;
  }

  private async latestOf(jobIds: readonly string[]): Promise<(AttemptRow | undefined)[]> {
    const rows: RawAttempt[] = await this.db.query(
      `SELECT DISTINCT ON (job_id) id, job_id, attempt, event_attempt, started_at, finished_at,
              outcome, billed,
              error_class, status_code, duration_ms, error, response_body
         FROM deliveries.attempts WHERE job_id = ANY($1::text[])
        ORDER BY job_id, attempt DESC`,
      [[...new Set(jobIds)]],
    );
    const byJob = new Map(rows.map((r) => [r.job_id, toRow(r)]));
    return jobIds.map((id) => byJob.get(id));
  }

  /**
   * One statement for the claims and outcomes at hand. Two claims of the same id in one
   * statement would both see the id come back from RETURNING, so only the first of them is
   * inserted; the others lose. An outcome's result is `undefined` (nothing to report).
   */
  private async writeAll(items: readonly Write[]): Promise<(Claim | undefined)[]> {
    const first = new Map<string, number>();
    const claims: Record<string, unknown>[] = [];
    const finishes: Record<string, unknown>[] = [];
    items.forEach((w, i) => {
      if (w.claim === undefined) {
        finishes.push({ id: w.id, ...finishColumns(w.finish) });
        return;
      }
      const start = w.claim;
      if (first.has(start.id)) return;
      first.set(start.id, i);
      claims.push({
        id: start.id,
        job_id: start.jobId,
        attempt: start.attempt,
        account_id: start.accountId,
        webhook_id: start.webhookId,
        started_at: start.startedAt,
        billed: start.billed,
        event_key: start.eventKey,
        ord: i,
        ...(w.finish ? finishColumns(w.finish) : {}),
      });
    });
    let inserted: { id: string; slot: number; won: boolean; spent: boolean }[] = [];
    if (claims.length === 0) await this.db.query(updateFinishes('$1'), [JSON.stringify(finishes)]);
    else if (finishes.length === 0)
      inserted = await this.db.query(INSERT_CLAIMS, [JSON.stringify(claims)]);
    else
      inserted = await this.db.query(CLAIMS_AND_FINISHES, [
        JSON.stringify(claims),
        JSON.stringify(finishes),
      ]);
    const results = new Map(inserted.map((r) => [r.id, r]));
    return items.map((w, i): Claim | undefined => {
      if (w.claim === undefined) return undefined;
      const result = results.get(w.claim.id);
      if (first.get(w.claim.id) !== i || result === undefined) return 'lost';
      return result.won ? { slot: result.slot } : result.spent ? 'spent' : 'lost';
    });
  }
}
