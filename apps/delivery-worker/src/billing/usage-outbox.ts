import {
  Events,
  nextUsageCut,
  USAGE_PART_RETENTION_MS,
  type UsageFlushed,
  type UsageFlushedV2,
  type UsageFlushVersion,
} from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import {
  UsageMeter,
  flushParts,
  nextUsageWindow,
  publishUsagePart,
  usagePartBytes,
  type UsagePartPublisher,
} from '@meridian/platform-messaging';
import { DELIVERY_ATTEMPT_CU } from '@meridian/webhooks';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';

export interface UsageOutboxOptions {
  producerId: string;
  intervalMs: number;
  now: () => Date;
  /** Attempts taken into one flush at most (a flush stays a few parts). */
  batchSize?: number;
  /** The contract version published (`USAGE_FLUSH_VERSION`; default 2, compact: ADR 0105). */
  version?: UsageFlushVersion;
  onPublished?: (outcome: 'ok' | 'failed') => void;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * 25 CU per attempt, exactly once (ADR 0431). The fleet usage contract and the part splitting
 * are the shared ones (UsageMeter + flushParts of platform-messaging, ADR 0103), but the window
 * is cut from the attempt log, not from memory: in one transaction the unbilled attempts are
 * grouped into parts, the parts stored with their ids and the attempts stamped with their part.
 * Only then are the parts published (same id on every retry, including after a kill -9; the
 * ledger applies an id once). An attempt row is billed by exactly one part, of the window holding
 * its start: windows end at usage cuts (`nextUsageWindow`), so an attempt made before the Free
 * reset is charged to the day before even when it is billed after (ADR 0108).
 */
export class UsageOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastWindowEndMs = 0;

  constructor(
    private readonly db: DataSource,
    private readonly publisher: UsagePartPublisher,
    private readonly options: UsageOutboxOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Cuts a window of unbilled attempts into parts, then publishes every unpublished part. */
  flush(): Promise<void> {
    const next = (this.running ?? Promise.resolve()).then(() =>
      this.flushOnce().catch((error: unknown) =>
        this.options.logger?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'usage flush failed; retried next tick',
        ),
      ),
    );
    this.running = next;
    return next;
  }

  private async flushOnce(): Promise<void> {
    // Through the gate (DbJobGate): skipped quietly while Postgres is out of reach, and a flush
    // failing because it is closes the gate (its one line, not one per tick); the first tick
    // after it opens bills what waits.
    await DbJobGate.of(this.db).run(async () => {
      await this.cut();
      await this.publishPending();
      await this.forgetPublished();
    });
  }

  private async cut(): Promise<void> {
    await this.db.transaction(async (tx) => {
      let rows: { id: string; account_id: string; webhook_id: string; started_at: Date }[] =
        await tx.query(
          `SELECT id, account_id, webhook_id, started_at FROM deliveries.attempts
            WHERE billed AND usage_part IS NULL
            ORDER BY started_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [this.options.batchSize ?? 20_000],
        );
      if (rows.length === 0) return;
      const { start, end } = nextUsageWindow(
        this.lastWindowEndMs,
        rows[0]!.started_at.getTime(),
        this.options.now().getTime(),
      );
      // The window ends before the next usage cut (an hour's start, the Free reset): the
      // attempts made from the cut on are the next window's.
      const cut = nextUsageCut(start.getTime());
      rows = rows.filter((row) => row.started_at.getTime() < cut);
      if (rows.length === 0) return;
      this.lastWindowEndMs = end.getTime();
      const meter = new UsageMeter();
      for (const row of rows)
        meter.addDelivery(row.account_id, row.webhook_id, DELIVERY_ATTEMPT_CU);
      const parts = flushParts(
        this.options.producerId,
        start.toISOString(),
        end.toISOString(),
        meter.drain(),
        usagePartBytes(this.options.version),
      );
      const partOfAccount = new Map<string, string>();
      for (const part of parts) {
        for (const account of part.accounts) partOfAccount.set(account, part.id);
        await tx.query(
          `INSERT INTO deliveries.usage_parts (id, body, created_at) VALUES ($1, $2, $3)`,
          [part.id, JSON.stringify(part), end],
        );
      }
      const ids = rows.map((r) => r.id);
      const partIds = rows.map((r) => partOfAccount.get(r.account_id)!);
      await tx.query(
        `UPDATE deliveries.attempts a SET usage_part = u.part
           FROM unnest($1::text[], $2::text[]) AS u(id, part) WHERE a.id = u.id`,
        [ids, partIds],
      );
    });
  }

  private async publishPending(): Promise<void> {
    const pending: { id: string; body: UsageFlushedV2 | UsageFlushed }[] = await this.db.query(
      `SELECT id, body FROM deliveries.usage_parts WHERE published_at IS NULL
        ORDER BY created_at, id LIMIT 100`,
    );
    for (const part of pending) {
      try {
        // Parts are stored compact; one stored before the compact contract (ADR 0105) goes out
        // as the v1 part it is.
        if ('usage' in part.body)
          await publishUsagePart(this.publisher, part.body, this.options.version);
        else await this.publisher.publish(Events.usageFlushed, part.body);
      } catch (error) {
        this.options.onPublished?.('failed');
        throw error;
      }
      await this.db.query(`UPDATE deliveries.usage_parts SET published_at = $2 WHERE id = $1`, [
        part.id,
        this.options.now(),
      ]);
      this.options.onPublished?.('ok');
    }
  }

  /**
   * Deletes parts published more than `USAGE_PART_RETENTION_MS` ago, a bounded batch a tick (the
   * outbox stores at most one window a tick): the stream no longer holds them, so nothing can
   * ask for them again. Attempts keep the id of the part that billed them.
   */
  private async forgetPublished(): Promise<void> {
    const before = new Date(this.options.now().getTime() - USAGE_PART_RETENTION_MS);
    await this.db.query(
      `DELETE FROM deliveries.usage_parts WHERE id IN (
         SELECT id FROM deliveries.usage_parts WHERE published_at < $1
          ORDER BY published_at LIMIT 1000 FOR UPDATE SKIP LOCKED)`,
      [before],
    );
  }
}
