import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

const DAY_MS = 86_400_000;
/** Day partitions made ahead of the clock's day, so a day's first usage never waits for one. */
const DAYS_AHEAD = 2;
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
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
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
  return dayOf(new Date(now.getTime() - retentionDays * DAY_MS));
}

/**
 * Usage journals and entries live in day partitions (ADR 0104 "Storage"). Hourly by the clock,
 * this makes the partitions of the next days and retires the days past
 * `USAGE_JOURNAL_RETENTION_DAYS`: each day's entries are summed per account, ledger and, for
 * what late usage took back from a prior period (ADR 0108), that period, into
 * `usage_summaries`, and the day's two partitions are dropped in the same transaction. The
 * running sums, `checkLedger` and the hourly usage (`usage_hourly`, kept) are unchanged by it;
 * what goes is each journal's detail. Rows of the default partition (a day that had no
 * partition yet) older than the same limit are summarised and deleted the same way, in batches.
 *
 * It runs beside the ledger's ticker, not in its pass: summing a day at a fleet's shape takes
 * minutes, which must not hold top-up clearing, resets or re-publishing. It looks every
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
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.LEDGER_TICK_MS === 0) return;
    await this.ensurePartitions(this.clock.now());
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
    const hour = Math.floor(now.getTime() / 3_600_000);
    if (this.lastRun === hour) return;
    this.lastRun = hour;
    await this.ensurePartitions(now);
    await this.retire(now);
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
      const day = new Date(today.getTime() + ahead * DAY_MS);
      const suffix = partitionSuffix(day);
      const bounds = `FROM ('${day.toISOString()}') TO ('${new Date(day.getTime() + DAY_MS).toISOString()}')`;
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
   * and deleted (the default partition's rows, in batches). Answers the partitions dropped and
   * the default partition's journals deleted.
   */
  async retire(now: Date): Promise<{ dropped: string[]; deleted: number }> {
    const dropped: string[] = [];
    let deleted = 0;
    const keep = firstKeptDay(now, this.config.USAGE_JOURNAL_RETENTION_DAYS);
    if (keep === null) return { dropped, deleted };
    const partitions: Array<{ name: string }> = await this.dataSource.query(
      `SELECT c.relname AS name FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'billing.usage_journal'::regclass ORDER BY c.relname`,
    );
    for (const { name } of partitions) {
      const match = PARTITION.exec(name);
      if (match === null) continue;
      const day = new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`);
      if (day.getTime() + DAY_MS > keep.getTime()) continue;
      const suffix = partitionSuffix(day);
      const done = await this.exclusive(async (run) => {
        // No usage reaches a retired day any more; SHARE makes sure while it is summed.
        await run(
          `LOCK TABLE billing.usage_journal_${suffix}, billing.usage_entries_${suffix} IN SHARE MODE`,
        );
        await run(
          `INSERT INTO billing.usage_summaries (day, account_id, ledger, prior_of, amount_cu, entries)
           SELECT $1::date, e.account_id, e.ledger,
                  coalesce(j.detail->>'periodStart', j.detail->>'priorOf')::timestamptz,
                  sum(e.amount_cu), count(*)
             FROM billing.usage_entries_${suffix} e
             LEFT JOIN billing.usage_journal_${suffix} j
               ON e.ledger = 'allowance_expired' AND j.id = e.journal_id
            GROUP BY 1, 2, 3, 4`,
          [day.toISOString().slice(0, 10)],
        );
        // The parents in the order a usage transaction's statement takes them (journal, then
        // entries): dropping a partition locks its parent, and the other order could deadlock
        // with a usage transaction holding the journal table and waiting for the entries.
        await run(
          `LOCK TABLE billing.usage_journal, billing.usage_entries IN ACCESS EXCLUSIVE MODE`,
        );
        await run(`DROP TABLE billing.usage_entries_${suffix}, billing.usage_journal_${suffix}`);
        return true;
      });
      if (done) dropped.push(suffix);
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
               FROM e GROUP BY 1, 2, 3, 4
             RETURNING 1)
           SELECT (SELECT count(*) FROM j)::int AS journals, (SELECT count(*) FROM s)::int AS summaries`,
          [keep.toISOString(), DEFAULT_BATCH],
        );
        return (row as { journals: number }).journals;
      });
      deleted += count || 0;
      if (!count || count < DEFAULT_BATCH) break;
    }
    if (dropped.length > 0 || deleted > 0)
      this.logger.info(
        { dropped, deleted, keptFrom: keep.toISOString() },
        'usage journals past their retention summarised',
      );
    return { dropped, deleted };
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
