import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DbJobGate, isDatabaseUnreachable } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { DAY, HOUR, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/** Day partitions made ahead of the clock's day, so a day's first usage never waits for one. */
const DAYS_AHEAD = 2;
/**
 * Journal ids of a day summed per transaction: ~0.4 s here (the bench sums ~500,000 entries a
 * second), so no transaction of the retirement holds back vacuum for long.
 */
const CHUNK_JOURNALS = 100_000;
/** Journals of the default partition summarised and deleted per statement, and statements a run. */
const DEFAULT_BATCH = 20_000;
const DEFAULT_BATCHES = 10;
/** The DDL waits this long for the usage transactions' locks, then gives up until the next run. */
const LOCK_TIMEOUT = '2s';
/** Two replicas never retire or create partitions at once. */
const ADVISORY_KEY = "hashtext('billing.usage_journal_retention')";
const PARTITION = /^usage_journal_p(\d{4})(\d{2})(\d{2})$/;

/** The UTC day a moment lies in, as its start. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY) * DAY);
}

/** `usage_journal_p20261128` / `usage_entries_p20261128`: a day partition's suffix. */
export function partitionSuffix(day: Date): string {
  return `p${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/**
 * The first day kept: a day partition is retired once its whole day lies `retentionDays` or
 * more before now, so at least `retentionDays` of journals are always there. Null: kept forever.
 */
export function firstKeptDay(now: Date, retentionDays: number): Date | null {
  if (retentionDays === 0) return null;
  return dayOf(new Date(now.getTime() - retentionDays * DAY));
}

/**
 * Usage journals and entries live in day partitions (ADR 0104 "Storage"). Hourly by the clock,
 * this makes the partitions of the next days and retires the days past
 * `USAGE_JOURNAL_RETENTION_DAYS`: each day's entries are summed per account, ledger and, for
 * what late usage took back from a prior period (ADR 0108), that period, in chunks of journal
 * ids (`retireDay`), and one transaction moves the sums into `usage_summaries` and drops the
 * day's two partitions. The
 * running sums, `checkLedger` and the hourly usage (`usage_hourly`, kept) are unchanged by it;
 * what goes is each journal's detail. Rows of the default partition (a day that had no
 * partition yet) older than the same limit are summarised and deleted the same way, in batches.
 *
 * It runs beside the ledger's ticker, not in its pass: summing a day at a fleet's shape takes
 * about an hour of one backend, which must not hold top-up clearing, resets or re-publishing. It looks every
 * `LEDGER_TICK_MS` (0: never; tests call `maintain`), and makes the partitions once before the
 * app takes usage.
 */
@Injectable()
export class UsageJournalRetention implements OnModuleInit, OnApplicationShutdown {
  private lastRun: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    // Read at each scrape from the catalogue (no table is read): what the alerts on storage
    // watch, since a retention that fails only logs, and the disk grows by a fleet's day a day.
    const days = (now: Date) => this.days(now);
    const clockNow = () => this.clock.now();
    new Gauge({
      name: 'billing_usage_journal_days',
      help: 'Day partitions of the usage journals: ahead (after today), kept (today and the retention), overdue (past USAGE_JOURNAL_RETENTION_DAYS, not yet retired)',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const counts = await days(clockNow()).catch(() => undefined);
        for (const state of ['ahead', 'kept', 'overdue'] as const)
          this.set({ state }, counts?.[state] ?? Number.NaN);
      },
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.config.LEDGER_TICK_MS === 0) return;
    // Not connected at start: the first run after it connects makes them (`maintain`).
    if (DbJobGate.of(this.dataSource).open) await this.ensurePartitions(this.clock.now());
    this.timer = setInterval(() => {
      // A run still going (a day being summed) is not queued behind.
      if (this.running !== undefined) return;
      this.running = this.maintain(this.clock.now())
        .catch((error: unknown) =>
          this.logger.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'usage journal retention failed',
          ),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, this.config.LEDGER_TICK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Runs `ensurePartitions` and `retire` once per clock hour (its timer calls it every
   * `LEDGER_TICK_MS`). A run that fails (a lock not had within `LOCK_TIMEOUT`) is tried again the next hour, not the
   * next pass: each try may hold usage up to that long.
   */
  async maintain(now: Date): Promise<void> {
    // Through the gate (DbJobGate): skipped quietly while Postgres is out of reach, and a run
    // failing because it is closes the gate (its one line) and is still owed this hour.
    const hour = Math.floor(now.getTime() / HOUR);
    if (this.lastRun === hour) return;
    const ran = await DbJobGate.of(this.dataSource).run(async () => {
      this.lastRun = hour;
      await this.ensurePartitions(now);
      await this.retire(now);
      return true;
    });
    if (ran === undefined && this.lastRun === hour) this.lastRun = undefined;
  }

  /**
   * Makes the day partitions of today and the next `DAYS_AHEAD` days where missing. A day whose
   * rows are already in the default partition keeps going there (Postgres refuses the partition;
   * logged, and nothing is lost): it is summarised from there when it expires.
   */
  async ensurePartitions(now: Date): Promise<string[]> {
    const made: string[] = [];
    const today = dayOf(now);
    for (let ahead = 0; ahead <= DAYS_AHEAD; ahead += 1) {
      const day = new Date(today.getTime() + ahead * DAY);
      const suffix = partitionSuffix(day);
      const bounds = `FROM ('${day.toISOString()}') TO ('${new Date(day.getTime() + DAY).toISOString()}')`;
      try {
        const created = await this.exclusive(async (run) => {
          const [exists] = await run(
            `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'billing' AND c.relname = $1`,
            [`usage_journal_${suffix}`],
          );
          if (exists !== undefined) return false;
          await run(
            `CREATE TABLE billing.usage_journal_${suffix} PARTITION OF billing.usage_journal FOR VALUES ${bounds}`,
          );
          await run(
            `CREATE TABLE billing.usage_entries_${suffix} PARTITION OF billing.usage_entries FOR VALUES ${bounds}`,
          );
          return true;
        });
        if (created) made.push(suffix);
      } catch (error) {
        // Postgres out of reach is no refusal of the partition: the run fails (DbJobGate).
        if (isDatabaseUnreachable(error)) throw error;
        this.logger.warn(
          { err: error instanceof Error ? error.message : String(error), partition: suffix },
          'usage journal partition not made (rows of that day stay in the default partition)',
        );
      }
    }
    return made;
  }

  /**
   * Retires every day before `firstKeptDay`: summarised and dropped (day partitions), summarised
   * and deleted (the default partition's rows, in batches). Answers the partitions dropped, the
   * default partition's journals deleted, and the longest a drop held the usage tables (`heldMs`:
   * from asking for their lock to the commit; usage transactions wait that long). `chunkJournals`:
   * journal ids a transaction sums.
   */
  async retire(
    now: Date,
    chunkJournals = CHUNK_JOURNALS,
  ): Promise<{ dropped: string[]; deleted: number; heldMs: number }> {
    const dropped: string[] = [];
    let deleted = 0;
    let heldMs = 0;
    const keep = firstKeptDay(now, this.config.USAGE_JOURNAL_RETENTION_DAYS);
    if (keep === null) return { dropped, deleted, heldMs };
    for (const day of await this.dayPartitions()) {
      if (day.getTime() + DAY > keep.getTime()) continue;
      const held = await this.retireDay(day, chunkJournals);
      if (held === undefined) continue;
      dropped.push(partitionSuffix(day));
      heldMs = Math.max(heldMs, held);
    }
    for (let batch = 0; batch < DEFAULT_BATCHES; batch += 1) {
      const count = await this.exclusive(async (run) => {
        const [row] = await run(
          `WITH j AS (
             DELETE FROM billing.usage_journal_default WHERE id IN (
               SELECT id FROM billing.usage_journal_default WHERE occurred_at < $1 LIMIT $2)
             RETURNING id, detail),
           e AS (
             DELETE FROM billing.usage_entries_default e USING j WHERE e.journal_id = j.id
             RETURNING e.account_id, e.ledger, e.amount_cu, e.occurred_at,
                       CASE WHEN e.ledger = 'allowance_expired'
                            THEN coalesce(j.detail->>'periodStart', j.detail->>'priorOf')::timestamptz END AS prior_of),
           s AS (
             INSERT INTO billing.usage_summaries (day, account_id, ledger, prior_of, amount_cu, entries)
             SELECT (occurred_at AT TIME ZONE 'UTC')::date, account_id, ledger, prior_of, sum(amount_cu), count(*)
               FROM e GROUP BY 1, 2, 3, 4)
           SELECT count(*)::int AS journals FROM j`,
          [keep.toISOString(), DEFAULT_BATCH],
        );
        return (row as { journals: number }).journals;
      });
      deleted += count || 0;
      if (!count || count < DEFAULT_BATCH) break;
    }
    if (dropped.length > 0 || deleted > 0)
      this.logger.info(
        { dropped, deleted, heldMs: Math.round(heldMs), keptFrom: keep.toISOString() },
        'usage journals past their retention summarised',
      );
    return { dropped, deleted, heldMs };
  }

  /**
   * The day partitions at `now`: after today (`DAYS_AHEAD` when the hourly run made them), today
   * and the days kept, and those past the retention that a run has not retired yet (0 but for
   * the hour or so a day takes). The default partition's rows are not counted.
   */
  async days(now: Date): Promise<{ ahead: number; kept: number; overdue: number }> {
    const tomorrow = dayOf(now).getTime() + DAY;
    const keep = firstKeptDay(now, this.config.USAGE_JOURNAL_RETENTION_DAYS);
    const counts = { ahead: 0, kept: 0, overdue: 0 };
    for (const day of await this.dayPartitions()) {
      if (day.getTime() >= tomorrow) counts.ahead += 1;
      else if (keep !== null && day.getTime() < keep.getTime()) counts.overdue += 1;
      else counts.kept += 1;
    }
    return counts;
  }

  /** The days of the usage journal's day partitions, oldest first. */
  private async dayPartitions(): Promise<Date[]> {
    const partitions: Array<{ name: string }> = await this.dataSource.query(
      `SELECT c.relname AS name FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'billing.usage_journal'::regclass ORDER BY c.relname`,
    );
    return partitions.flatMap(({ name }) => {
      const match = PARTITION.exec(name);
      return match === null ? [] : [new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`)];
    });
  }

  /**
   * Sums a day partition's entries into `usage_summaries_pending`, `CHUNK_JOURNALS` journal ids
   * a transaction (a long one would hold back every vacuum of the database), resuming where
   * `usage_retirements` says the day got; then, in one transaction, moves the day's sums into
   * `usage_summaries` and drops its two partitions. No usage reaches a day this old (the
   * retention outlasts the BILLING stream); should a journal have come after all, the day is
   * not dropped, and the next run sums it too. Answers how long the drop held the usage tables
   * (ms), or undefined when the day was not dropped.
   */
  private async retireDay(day: Date, chunkJournals: number): Promise<number | undefined> {
    const suffix = partitionSuffix(day);
    const date = day.toISOString().slice(0, 10);
    const journal = `billing.usage_journal_${suffix}`;
    const entries = `billing.usage_entries_${suffix}`;
    for (;;) {
      const more = await this.exclusive(async (run) => {
        await run(
          `INSERT INTO billing.usage_retirements (day, next_journal_id)
           SELECT $1::date, coalesce(min(id), 0) FROM ${journal} ON CONFLICT (day) DO NOTHING`,
          [date],
        );
        const [{ next }] = (await run(
          `SELECT next_journal_id AS next FROM billing.usage_retirements WHERE day = $1 FOR UPDATE`,
          [date],
        )) as Array<{ next: string }>;
        // The next journal id of the day, past the ids no journal took (other days' and kinds').
        const [{ from }] = (await run(`SELECT min(id) AS from FROM ${journal} WHERE id >= $1`, [
          next,
        ])) as Array<{ from: string | null }>;
        if (from === null) return false;
        const to = Number(from) + chunkJournals;
        await run(
          `INSERT INTO billing.usage_summaries_pending (day, account_id, ledger, prior_of, amount_cu, entries)
           SELECT $1::date, e.account_id, e.ledger,
                  coalesce(j.detail->>'periodStart', j.detail->>'priorOf')::timestamptz,
                  sum(e.amount_cu), count(*)
             FROM ${entries} e
             LEFT JOIN ${journal} j ON e.ledger = 'allowance_expired' AND j.id = e.journal_id
            WHERE e.journal_id >= $2 AND e.journal_id < $3
            GROUP BY 1, 2, 3, 4`,
          [date, from, to],
        );
        await run(`UPDATE billing.usage_retirements SET next_journal_id = $2 WHERE day = $1`, [
          date,
          to,
        ]);
        return true;
      });
      if (more === undefined) return undefined; // another replica is retiring
      if (!more) break;
    }
    let holding = 0;
    const done = await this.exclusive(async (run) => {
      // Nothing may reach the day while it is moved and dropped; a journal that came after its
      // sums began leaves it for the next run.
      await run(`LOCK TABLE ${journal}, ${entries} IN SHARE MODE`);
      const [{ left }] = (await run(
        `SELECT EXISTS (SELECT 1 FROM ${journal} j, billing.usage_retirements r
                         WHERE r.day = $1 AND j.id >= r.next_journal_id) AS left`,
        [date],
      )) as Array<{ left: boolean }>;
      if (left) return false;
      await run(
        `INSERT INTO billing.usage_summaries (day, account_id, ledger, prior_of, amount_cu, entries)
         SELECT day, account_id, ledger, prior_of, sum(amount_cu), sum(entries)
           FROM billing.usage_summaries_pending WHERE day = $1 GROUP BY 1, 2, 3, 4`,
        [date],
      );
      await run(`DELETE FROM billing.usage_summaries_pending WHERE day = $1`, [date]);
      await run(`DELETE FROM billing.usage_retirements WHERE day = $1`, [date]);
      // The parents in the order a usage transaction's statement takes them (journal, then
      // entries): dropping a partition locks its parent, and the other order could deadlock
      // with a usage transaction holding the journal table and waiting for the entries.
      holding = performance.now();
      await run(`LOCK TABLE billing.usage_journal, billing.usage_entries IN ACCESS EXCLUSIVE MODE`);
      await run(`DROP TABLE ${entries}, ${journal}`);
      return true;
    });
    return done === true ? performance.now() - holding : undefined;
  }

  /**
   * One transaction holding the retention's advisory lock (another replica's run: skipped,
   * answers undefined), waiting at most `LOCK_TIMEOUT` for a table lock.
   */
  private async exclusive<T>(
    work: (run: (sql: string, params?: unknown[]) => Promise<unknown[]>) => Promise<T>,
  ): Promise<T | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const [lock]: Array<{ ok: boolean }> = await manager.query(
        `SELECT pg_try_advisory_xact_lock(${ADVISORY_KEY}) AS ok`,
      );
      if (!lock!.ok) return undefined;
      await manager.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      return work((sql, params) => manager.query(sql, params));
    });
  }
}
