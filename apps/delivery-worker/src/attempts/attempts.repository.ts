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
  /**
   * The job ids of the event's deliveries that go before this one (`earlierDeliveriesOf`) and the
   * highest slot among their attempts the caller read before deciding to claim (0: none). The
   * claim is refused (`busy`) when one of them took a higher slot since: the decision was made on
   * a stale read (another worker's attempt of the earlier delivery), and the caller looks again.
   */
  earlierJobIds?: readonly string[];
  earlierSlot?: number;
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
 * give up, nothing recorded or billed), `busy` (another delivery of the event has an attempt in
 * flight, or an earlier one attempted since the caller read it: nothing recorded, look again).
 */
export type Claim = { slot: number } | 'lost' | 'spent' | 'busy';

/**
 * An attempt row without an outcome this long after it started is no longer a request in flight
 * (a request ends within CONNECT_TIMEOUT_MS + ANSWER_TIMEOUT_MS, 20 s): its worker stopped, and
 * the row waits for its job's next look to be closed as `interrupted`. It holds no other
 * delivery of its event back.
 */
export const IN_FLIGHT_AT_MOST_MS = 60_000;

/** A write of the attempt log: a claim (a new row, maybe with its outcome) or an outcome. */
type Write =
  | { claim: AttemptStart; finish: AttemptFinish | undefined }
  | { claim: undefined; id: string; finish: AttemptFinish };

const CLAIM_COLUMNS = `id, job_id, attempt, account_id, webhook_id, started_at, billed,
  outcome, finished_at, error_class, status_code, duration_ms, error, response_body`;

/**
 * The INSERT of the claims ($1), each with the event's next attempt slot (`event_attempt`, 1–8,
 * unique per `event_key`): the highest slot taken plus one. A claim past slot 8 is not inserted
 * (`spent`). One delivery of an event attempts at a time (ADR 0431 amendment, "Two workers"): a
 * claim is refused (`busy`) while another delivery of its event has an attempt in flight (a row
 * without outcome, started less than IN_FLIGHT_AT_MOST_MS before this claim), or when one of its
 * earlier deliveries took a slot above the one the caller read (`earlier_slot`), or when a claim
 * of another delivery of the event goes before it in this statement (the earlier phase first).
 *
 * The unique slot index serializes the claims of one event across workers: two statements that
 * do not see each other's rows compute the same slot (slots are dense), so the second waits for
 * the first on the index and inserts nothing (`lost`: its job looks again and then sees the
 * first). So a claim that is inserted saw every row of its event, and its checks were exact.
 * A claim is won when its id comes back.
 */
const claimsStatement = (param: string) => `WITH c AS (
    SELECT c.*, row_number() OVER (PARTITION BY c.event_key
                                   ORDER BY cardinality(c.earlier), c.ord) AS event_rank
      FROM json_to_recordset(${param}::json)
           AS c(${ROW_TYPE}, event_key text, ord int, earlier text[], earlier_slot int)
     WHERE NOT EXISTS (SELECT 1 FROM deliveries.attempts a WHERE a.id = c.id)),
  e AS (
    SELECT c.*, t.taken,
           t.taken >= ${MAX_DELIVERY_ATTEMPTS} AS spent,
           c.event_rank > 1 OR t.in_flight OR t.earlier_moved AS busy
      FROM c CROSS JOIN LATERAL (
        SELECT COALESCE(max(a.event_attempt), 0) AS taken,
               COALESCE(bool_or(a.outcome IS NULL AND a.job_id <> c.job_id
                   AND a.started_at > c.started_at - interval '${IN_FLIGHT_AT_MOST_MS} milliseconds'),
                 false) AS in_flight,
               COALESCE(bool_or(a.job_id = ANY(c.earlier)
                   AND a.event_attempt > COALESCE(c.earlier_slot, 0)), false) AS earlier_moved
          FROM deliveries.attempts a WHERE a.event_key = c.event_key) t),
  x AS (SELECT e.*, e.taken + 1 AS slot, NOT e.spent AND e.busy AS refused FROM e),
  won AS (
    INSERT INTO deliveries.attempts (${CLAIM_COLUMNS}, event_key, event_attempt)
    SELECT ${CLAIM_COLUMNS}, event_key, slot FROM x WHERE NOT spent AND NOT refused
    ON CONFLICT DO NOTHING RETURNING id)
  SELECT x.id, x.slot::int AS slot, won.id IS NOT NULL AS won, x.spent, x.refused AS busy
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
  'WITH c AS (',
  `WITH finished AS (${updateFinishes('$2')} RETURNING 1), c AS (`,
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
   * event's 8 attempts are taken (by this or its other deliveries). `busy` when another delivery
   * of the event is attempting, or an earlier one attempted since `start.earlierSlot` was read.
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
        earlier: start.earlierJobIds ?? [],
        earlier_slot: start.earlierSlot ?? 0,
        ...(w.finish ? finishColumns(w.finish) : {}),
      });
    });
    let inserted: { id: string; slot: number; won: boolean; spent: boolean; busy: boolean }[] = [];
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
      if (result.won) return { slot: result.slot };
      return result.spent ? 'spent' : result.busy ? 'busy' : 'lost';
    });
  }
}
