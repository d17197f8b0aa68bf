import { Injectable } from '@nestjs/common';
import type {
  DeliveryDropReason,
  DeliveryErrorClass,
  DeliveryHealth,
  DeliveryPhase,
  WebhookEventBody,
} from '@meridian/contracts';
import { DeliveryPhaseSchema, Streams } from '@meridian/contracts';
import { compareInBlock } from '@meridian/webhooks';
import { DataSource, type EntityManager } from 'typeorm';
import { SUMMARY_COLUMNS, summaryOf } from './event-summary';

/** A row of the attempt log (`attemptsPage`: every outcome but success, or one event's all). */
export interface AttemptRow {
  seq: string;
  id: string;
  event_id: string;
  phase: DeliveryPhase;
  attempt: number;
  /** The slot of its event's 8 the attempt took (DeliveryHealth `eventAttempt`), if known. */
  event_attempt: number | null;
  outcome: AttemptOutcome;
  billed: boolean;
  final: boolean;
  test: boolean;
  status_code: number | null;
  duration_ms: number | null;
  /** The attempt's errorClass, or a drop's dropReason. */
  error_class: DeliveryErrorClass | DeliveryDropReason | 'rate_limited' | null;
  error: string | null;
  response_body: string | null;
  at: Date;
  /** The event's summary (event-summary.ts); null where the row has none (a test delivery). */
  network: string | null;
  block_number: string | null;
  tx_hash: string | null;
  addresses: string[] | null;
}

/** The log's filters (`GET /webhooks/{id}/deliveries`), all optional, all ANDed. */
export interface AttemptFilter {
  eventId?: string | undefined;
  txHash?: string | undefined;
  blockNumber?: bigint | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  outcomes?: readonly AttemptOutcome[] | undefined;
}

/** An outcome of the log: delivery-worker's, or `rate_limited` (dropped by the events budget). */
export type AttemptOutcome = DeliveryHealth['outcome'] | 'rate_limited';

export interface StatsRow {
  delivered_total: string;
  failed_total: string;
  last_delivered_at: Date | null;
  failing_since: Date | null;
  attempts_since_failing: number;
}

/** An active webhook whose failing run may be due for the auto-pause decision. */
export interface AutoPauseCandidate {
  webhook_id: string;
  failing_since: Date;
  attempts_since_failing: number;
}

export interface RecordResult {
  /** False when this attempt id was recorded before (a redelivered event). */
  recorded: boolean;
  stats: StatsRow | undefined;
}

/** The attempt log and counters (webhooks.delivery_attempts, webhooks.delivery_stats). */
@Injectable()
export class DeliveriesRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Records one outcome and moves the counters in one transaction, once per attempt id. Test
   * deliveries and drops of queued events are logged but stay out of the counters and the
   * auto-pause facts. Outcomes are
   * consumed in parallel, so the failing run is kept by attempt time, not arrival: a success
   * ends the failures before it, and a failure older than the last success, or than the last
   * owner resume (`restartFailingRun`), starts no run and extends none.
   */
  async record(h: DeliveryHealth): Promise<RecordResult> {
    return this.db.transaction(async (m) => {
      // The event's summary (event-summary.ts): from the event when the outcome carries it
      // (a final failure or a drop), else from the matcher's own record of it
      // (`matching_events`, kept for the last few hundred blocks), else from an earlier row of
      // the event that had one; none for a test delivery. Index lookups, one statement.
      const inserted: unknown[] = await m.query(
        `INSERT INTO webhooks.delivery_attempts
           (id, webhook_id, account_id, event_id, phase, attempt, outcome, billed, final, test,
            status_code, duration_ms, error_class, error, response_body, payload, at,
            event_attempt, ${SUMMARY_COLUMNS})
         SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16::jsonb,$17,$18,
                COALESCE(n.network, e.network), COALESCE(n.block_number, e.block_number),
                COALESCE(n.tx_hash, e.tx_hash), COALESCE(n.addresses, e.addresses)
           FROM (SELECT ${summaryOf('src.p')}
                   FROM (SELECT COALESCE($16::jsonb, (
                           SELECT me.payload FROM webhooks.matching_events me
                            WHERE me.webhook_id = $2 AND me.event_id = $4)) AS p) src
                ) AS n(${SUMMARY_COLUMNS})
           LEFT JOIN LATERAL (
             SELECT ${SUMMARY_COLUMNS} FROM webhooks.delivery_attempts d
              WHERE d.webhook_id = $2 AND d.event_id = $4 AND d.network IS NOT NULL
              ORDER BY d.seq DESC LIMIT 1) e ON n.network IS NULL
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          h.id,
          h.webhookId,
          h.accountId,
          h.eventId,
          h.phase,
          h.attempt,
          h.outcome,
          h.billed,
          h.final,
          h.test ?? false,
          h.statusCode ?? null,
          h.durationMs ?? null,
          h.errorClass ?? h.dropReason ?? null,
          h.error ?? null,
          h.responseBody ?? null,
          h.payload ? JSON.stringify(h.payload) : null,
          h.at,
          h.eventAttempt ?? null,
        ],
      );
      if (inserted.length === 0) return { recorded: false, stats: undefined };
      // A drop is not an attempt: logged (with its reason) but not counted.
      if (h.test || h.outcome === 'dropped') return { recorded: true, stats: undefined };
      const ok = h.outcome === 'success';
      const rows: StatsRow[] = await m.query(
        `INSERT INTO webhooks.delivery_stats AS s
           (webhook_id, delivered_total, failed_total, last_delivered_at, failing_since, attempts_since_failing)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (webhook_id) DO UPDATE SET
           delivered_total = s.delivered_total + EXCLUDED.delivered_total,
           failed_total = s.failed_total + EXCLUDED.failed_total,
           last_delivered_at = GREATEST(s.last_delivered_at, EXCLUDED.last_delivered_at),
           failing_since = CASE
             WHEN $7 THEN CASE WHEN s.failing_since <= $8 THEN NULL ELSE s.failing_since END
             WHEN s.last_delivered_at >= $8 THEN s.failing_since
             WHEN $8 < (SELECT w.resumed_at FROM webhooks.webhooks w WHERE w.id = $1)
               THEN s.failing_since
             ELSE LEAST(COALESCE(s.failing_since, $8), $8) END,
           attempts_since_failing = CASE
             WHEN $7 THEN CASE WHEN s.failing_since <= $8 THEN 0 ELSE s.attempts_since_failing END
             WHEN s.last_delivered_at >= $8 THEN s.attempts_since_failing
             WHEN $8 < (SELECT w.resumed_at FROM webhooks.webhooks w WHERE w.id = $1)
               THEN s.attempts_since_failing
             ELSE s.attempts_since_failing + 1 END
         RETURNING delivered_total, failed_total, last_delivered_at, failing_since, attempts_since_failing`,
        [
          h.webhookId,
          ok ? 1 : 0,
          ok ? 0 : 1,
          ok ? h.at : null,
          ok ? null : h.at,
          ok ? 0 : 1,
          ok,
          h.at,
        ],
      );
      return { recorded: true, stats: rows[0] };
    });
  }

  /**
   * An owner resume says the endpoint is fixed: the failing run that led to the pause is over,
   * so the next auto-pause needs 30 new minutes of failures (and ≥ 20 attempts) after it. Runs
   * in the resume's transaction; the counters shown in `stats` are untouched.
   */
  async restartFailingRun(m: EntityManager, webhookId: string): Promise<void> {
    await m.query(
      `INSERT INTO webhooks.delivery_stats AS s
         (webhook_id, delivered_total, failed_total, last_delivered_at, failing_since, attempts_since_failing)
       VALUES ($1, 0, 0, NULL, NULL, 0)
       ON CONFLICT (webhook_id) DO UPDATE SET failing_since = NULL, attempts_since_failing = 0`,
      [webhookId],
    );
  }

  /**
   * The webhook's current failing run, read in a service decision's transaction after the
   * webhook's row lock, with `FOR SHARE` on its `delivery_stats` row. `record` writes the run
   * under that row's lock (its upsert), not the webhook's: taking the webhook row lock on every
   * outcome would queue each attempt of a busy webhook behind API writes and decisions on that
   * row. So the stats row is where outcome and decision are serialised: a success committed
   * before this read is seen, one still committing is waited for (and then seen), and one
   * recorded later waits for the decision's commit and comes after the pause. Lock order is
   * webhook then stats here and in an owner resume (`restartFailingRun`); `record` takes only
   * the stats row, so no cycle.
   */
  async lockedFailingRun(
    m: EntityManager,
    webhookId: string,
  ): Promise<{ failingSince: Date | null; attemptsSinceFailing: number }> {
    const rows: { failing_since: Date | null; attempts_since_failing: number }[] = await m.query(
      `SELECT failing_since, attempts_since_failing FROM webhooks.delivery_stats
        WHERE webhook_id = $1 FOR SHARE`,
      [webhookId],
    );
    return {
      failingSince: rows[0]?.failing_since ?? null,
      attemptsSinceFailing: rows[0]?.attempts_since_failing ?? 0,
    };
  }

  /**
   * Deletes the attempts recorded before `before` among the `limit` oldest (by `seq`, the order
   * they were recorded in, through its unique index: the statement reads those rows, not the
   * table, and locks only the ones it deletes). Rows another replica is deleting are skipped.
   * The counters stay as they are. Replay claims asked for before `before` go too (as many; the
   * larger count is answered): the retention, at least `DELIVERY_LOG_MIN_RETENTION_MS`, is
   * longer than a claim holds its phase (`REPLAY_HOLD_MS`).
   */
  async prune(before: Date, limit: number): Promise<number> {
    const [counts]: { attempts: number; replays: number }[] = await this.db.query(
      `WITH attempts AS (
         DELETE FROM webhooks.delivery_attempts WHERE seq IN (
           SELECT seq FROM webhooks.delivery_attempts
            WHERE seq <= (SELECT max(seq) FROM (
                    SELECT seq FROM webhooks.delivery_attempts ORDER BY seq LIMIT $2) oldest)
              AND at < $1
            FOR UPDATE SKIP LOCKED)
         RETURNING 1),
       replays AS (
         DELETE FROM webhooks.delivery_replays WHERE ctid IN (
           SELECT ctid FROM webhooks.delivery_replays WHERE requested_at < $1
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT (SELECT count(*) FROM attempts)::int AS attempts,
              (SELECT count(*) FROM replays)::int AS replays`,
      [before, limit],
    );
    return Math.max(counts?.attempts ?? 0, counts?.replays ?? 0);
  }

  /**
   * The attempt log, last recorded first; cursor = the last row's seq. Without a filter that
   * names an event (`eventId`, `txHash`, `blockNumber`) or `outcomes`, every outcome but success
   * (COMPAT "failed attempts"); with one, every outcome (successes too) unless `outcomes` says
   * which. `since`/`until` bound the row's time (`at`, inclusive). Through the indexes of
   * webhook and seq (failures), event, transaction hash or block. Outcomes are consumed in
   * parallel, so two attempts made within the same few milliseconds may list in either order.
   */
  async attemptsPage(
    webhookId: string,
    filter: AttemptFilter,
    limit: number,
    cursor: string | undefined,
  ) {
    const params: unknown[] = [webhookId, cursor ?? null, limit + 1];
    const where: string[] = [];
    const add = (sql: (ref: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filter.eventId !== undefined) add((r) => `event_id = ${r}`, filter.eventId);
    if (filter.txHash !== undefined) add((r) => `tx_hash = ${r}`, filter.txHash);
    if (filter.blockNumber !== undefined)
      add((r) => `block_number = ${r}::bigint`, filter.blockNumber.toString());
    if (filter.since !== undefined) add((r) => `at >= ${r}`, filter.since);
    if (filter.until !== undefined) add((r) => `at <= ${r}`, filter.until);
    if (filter.outcomes !== undefined)
      add((r) => `outcome = ANY(${r}::text[])`, [...filter.outcomes]);
    else if (
      filter.eventId === undefined &&
      filter.txHash === undefined &&
      filter.blockNumber === undefined
    )
      where.push(`outcome <> 'success'`);
    const rows: AttemptRow[] = await this.db.query(
      `SELECT seq, id, event_id, phase, attempt, event_attempt, outcome, billed, final, test,
              status_code, duration_ms, error_class, error, response_body, at,
              ${SUMMARY_COLUMNS}
         FROM webhooks.delivery_attempts
        WHERE webhook_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
          ${where.map((w) => `AND ${w}`).join(' ')}
        ORDER BY seq DESC LIMIT $3`,
      params,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items.at(-1)!.seq : null };
  }

  /**
   * Active webhooks whose failing run started at or before `failingBefore` with at least
   * `minAttempts` attempts: the candidates of the auto-pause decision (`shouldAutoPause`
   * decides, with these facts, again under the row locks), oldest run first, at most `limit`,
   * none of `excluding` (those a sweep pass looked at already).
   */
  async autoPauseCandidates(
    failingBefore: Date,
    minAttempts: number,
    limit: number,
    excluding: readonly string[] = [],
  ): Promise<AutoPauseCandidate[]> {
    return this.db.query(
      `SELECT s.webhook_id, s.failing_since, s.attempts_since_failing
         FROM webhooks.delivery_stats s
         JOIN webhooks.webhooks w ON w.id = s.webhook_id
        WHERE w.status = 'active' AND s.failing_since <= $1 AND s.attempts_since_failing >= $2
          AND s.webhook_id <> ALL($4::text[])
        ORDER BY s.failing_since LIMIT $3`,
      [failingBefore, minAttempts, limit, excluding],
    );
  }

  /**
   * Active webhooks of accounts at zero balance since `exhaustedBefore` or earlier that have
   * events to deliver: the candidates of the no-balance decision (`shouldPauseForNoBalance`
   * decides), at most `limit`. "Events to deliver" is what this app holds of them: an attempt
   * delivery-worker held back as `no_balance` (outcome failure, a real event, not a test
   * delivery; a drop with that reason is not one) recorded at or after the account's
   * `exhausted_since`; a top-up clears `exhausted_since`, and a later exhaustion needs a new such
   * attempt. (`outcome <> 'success'` lets the statement use `delivery_attempts_failed`.) None of
   * `excluding` (those a sweep pass looked at already).
   */
  async noBalanceCandidates(
    exhaustedBefore: Date,
    limit: number,
    excluding: readonly string[] = [],
  ): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT w.id
         FROM webhooks.accounts a
         JOIN webhooks.webhooks w ON w.account_id = a.account_id AND w.status = 'active'
        WHERE a.exhausted_since <= $1
          AND EXISTS (SELECT 1 FROM webhooks.delivery_attempts d
                       WHERE d.webhook_id = w.id AND d.outcome <> 'success'
                         AND d.outcome = 'failure' AND d.error_class = 'no_balance'
                         AND NOT d.test
                         AND d.at >= a.exhausted_since)
          AND w.id <> ALL($3::text[])
        ORDER BY a.exhausted_since LIMIT $2`,
      [exhaustedBefore, limit, excluding],
    );
    return rows.map((r) => r.id);
  }

  async stats(webhookId: string): Promise<{ stats: StatsRow | undefined; rateLimited: string }> {
    const [stats] = (await this.db.query(
      `SELECT delivered_total, failed_total, last_delivered_at, failing_since, attempts_since_failing
         FROM webhooks.delivery_stats WHERE webhook_id = $1`,
      [webhookId],
    )) as StatsRow[];
    const [limited] = (await this.db.query(
      `SELECT rate_limited_total FROM webhooks.matching_rate_limited WHERE webhook_id = $1`,
      [webhookId],
    )) as { rate_limited_total: string }[];
    return { stats, rateLimited: limited?.rate_limited_total ?? '0' };
  }

  /**
   * Given-up deliveries of one event, or in a time or block range, by event and then phase in
   * the order they are sent: the one rule of "given up" (README "Delivery log, stats and
   * replay"). A phase is given up when its last final outcome (a failure or a drop) is not a
   * success, no later run of it (a replay) was delivered since, and no replay of it is still
   * running: a replay claimed that final outcome (`delivery_replays.given_up_seq`) and was
   * asked for less than `replayHoldMs` ago. A replay run ends with its own final outcome, which
   * is recorded after the one it replayed; a replay whose job never ran (the WEBHOOK stream keeps
   * a job for `replayHoldMs`) stops holding the phase when its job can no longer be delivered.
   * `seq` is the given-up attempt's, the key `claimReplays` takes. Events come in chain order,
   * as they went out live (QA ZZ: a range replay went out by event id): by block, then by their
   * place in it (`compareInBlock`), each event's phases in the order they are sent; the limit
   * keeps the earliest blocks.
   */
  async givenUp(
    webhookId: string,
    range:
      { eventId: string } | { fromAt: Date; toAt: Date } | { fromBlock: bigint; toBlock: bigint },
    limit: number,
    now: Date,
  ): Promise<GivenUpRow[]> {
    const where =
      'eventId' in range
        ? 'event_id = $2'
        : 'fromAt' in range
          ? 'at >= $2 AND at <= $3'
          : 'block_number >= $2 AND block_number <= $3';
    const params =
      'eventId' in range
        ? [range.eventId]
        : 'fromAt' in range
          ? [range.fromAt, range.toAt]
          : [range.fromBlock.toString(), range.toBlock.toString()];
    const n = params.length;
    // A phase given up in the range, unless a later run of it (a replay) was delivered since or
    // is still running; in the order the worker sends an event's phases (a replay publishes them
    // so).
    const phases = DeliveryPhaseSchema.options;
    const rows: GivenUpRow[] = await this.db.query(
      `SELECT event_id, phase, payload, seq FROM (
         SELECT DISTINCT ON (event_id, phase) event_id, phase, payload, seq, block_number
           FROM webhooks.delivery_attempts
          WHERE webhook_id = $1 AND final AND outcome <> 'success' AND NOT test
            AND payload IS NOT NULL AND ${where}
          ORDER BY event_id, phase, seq DESC) given_up
        WHERE NOT EXISTS (
          SELECT 1 FROM webhooks.delivery_attempts later
           WHERE later.webhook_id = $1 AND later.event_id = given_up.event_id
             AND later.phase = given_up.phase AND later.seq > given_up.seq
             AND later.outcome = 'success' AND NOT later.test)
          AND NOT EXISTS (
          SELECT 1 FROM webhooks.delivery_replays r
           WHERE r.webhook_id = $1 AND r.event_id = given_up.event_id
             AND r.phase = given_up.phase AND ${replayRunning('r', `$${n + 3}`)})
        ORDER BY block_number, event_id, array_position($${n + 2}::text[], phase)
        LIMIT ${Math.max(1, Math.floor(limit))}`,
      [webhookId, ...params, phases, replayHoldCutoff(now)],
    );
    const blockOf = (row: GivenUpRow) => BigInt(row.payload.block.number);
    return rows.sort(
      (a, b) =>
        Number(blockOf(a) - blockOf(b)) ||
        compareInBlock(a.payload.raw, b.payload.raw) ||
        (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0) ||
        phases.indexOf(a.phase as DeliveryPhase) - phases.indexOf(b.phase as DeliveryPhase),
    );
  }

  /**
   * Claims given-up phases for one replay, atomically: a phase is claimed unless a replay of the
   * same given-up attempt is still running (`givenUp`'s rule, re-checked under the row's lock),
   * so of two requests racing, on one replica or several, one claims it and the other gets
   * nothing. Answers the claimed ones, in the order given. `release` undoes a claim whose job
   * could not be published.
   */
  async claimReplays(
    webhookId: string,
    rows: readonly GivenUpRow[],
    jobIdOf: (row: GivenUpRow) => string,
    now: Date,
  ): Promise<GivenUpRow[]> {
    if (rows.length === 0) return [];
    const claimed: { event_id: string; phase: string }[] = await this.db.query(
      `INSERT INTO webhooks.delivery_replays AS r
         (webhook_id, event_id, phase, given_up_seq, job_id, requested_at)
       SELECT $1, c.event_id, c.phase, c.seq, c.job_id, $6
         FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[])
           AS c(event_id, phase, seq, job_id)
       ON CONFLICT (webhook_id, event_id, phase) DO UPDATE
         SET given_up_seq = EXCLUDED.given_up_seq, job_id = EXCLUDED.job_id,
             requested_at = EXCLUDED.requested_at
         WHERE NOT (${replayRunning('r', '$7', 'EXCLUDED.given_up_seq')})
       RETURNING event_id, phase`,
      [
        webhookId,
        rows.map((r) => r.event_id),
        rows.map((r) => r.phase),
        rows.map((r) => r.seq),
        rows.map(jobIdOf),
        now,
        replayHoldCutoff(now),
      ],
    );
    const won = new Set(claimed.map((c) => `${c.event_id} ${c.phase}`));
    return rows.filter((r) => won.has(`${r.event_id} ${r.phase}`));
  }

  /** Drops the claims of these replay jobs (their jobs were not published). */
  async releaseReplays(webhookId: string, jobIds: readonly string[]): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db.query(
      `DELETE FROM webhooks.delivery_replays WHERE webhook_id = $1 AND job_id = ANY($2::text[])`,
      [webhookId, jobIds],
    );
  }
}

/** A given-up phase: its last final outcome's seq, the replay's claim key. */
export interface GivenUpRow {
  event_id: string;
  phase: string;
  payload: WebhookEventBody;
  seq: string;
}

/**
 * How long a replay may hold its phase without a final outcome: the WEBHOOK stream's max age,
 * after which its job is gone from the stream and can no longer run (a run of 8 attempts takes
 * about an hour, waits included).
 */
export const REPLAY_HOLD_MS = Streams.WEBHOOK.maxAgeMs;

function replayHoldCutoff(now: Date): Date {
  return new Date(now.getTime() - REPLAY_HOLD_MS);
}

/**
 * SQL: replay `r` is still running against the given-up attempt `givenUpSeq` (the phase's last
 * final outcome): it replayed that very outcome (none is recorded after it yet) and its job may
 * still be on the stream (asked for after `cutoff`).
 */
function replayRunning(r: string, cutoff: string, givenUpSeq = 'given_up.seq'): string {
  return `${r}.given_up_seq >= ${givenUpSeq} AND ${r}.requested_at > ${cutoff}`;
}
