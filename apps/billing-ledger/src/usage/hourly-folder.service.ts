import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SerialRun } from '../ledger/serial-run';
import { HOURLY_SHARDS, UsageFlushesRepository } from './usage-flushes.repository';

/**
 * Recorded rows of a shard folded per transaction: a usage transaction records one per shard,
 * about one a second at a fleet's shape, so a shard's fold every 30 s takes them all in one
 * statement (its upserts, the cost, are per distinct key, not per row).
 */
const FOLD_ROWS = 64;

/**
 * Folds the hourly usage that usage transactions record (a row of arrays per account shard)
 * into `usage_hourly` (ADR 0104): one shard every `USAGE_FOLD_MS / HOURLY_SHARDS`, so each shard
 * every `USAGE_FOLD_MS` and the fold's upserts spread over the interval in small bursts; and
 * every shard before each read of usage, so what the usage API answers includes every committed
 * transaction. A fold adds each busy account's rollup rows once for all the transactions since
 * the last one instead of once per transaction, and keeps those upserts off the usage
 * transaction (and the balance-state lag).
 *
 * Every replica's timer steps through every shard, but a step folds its shard only when the
 * shard's oldest recorded row has waited at least half of `USAGE_FOLD_MS`. A fold's cost is its
 * distinct (account, hour, network, method) keys, about the same whether it takes 30 s of rows
 * or 15 s of them; so with several ledger replicas (partitions, ADR 0105) a shard another one
 * folded lately is left alone, and the fleet folds each shard once or twice an interval, not
 * once per replica.
 */
@Injectable()
export class HourlyFolder implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  /** The shard the timer folds next. */
  private nextShard = 0;
  private readonly serial = new SerialRun(() => this.foldAll());
  private readonly step = new SerialRun(() => this.foldNext());

  constructor(
    private readonly flushes: UsageFlushesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly db: DbJobGate,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.USAGE_FOLD_MS > 0) {
      this.timer = setInterval(
        () =>
          void this.step
            .run()
            .catch((error: unknown) =>
              this.logger.warn(
                { err: error instanceof Error ? error.message : String(error) },
                'hourly usage fold failed; the next one takes it',
              ),
            ),
        Math.max(1, Math.round(this.config.USAGE_FOLD_MS / HOURLY_SHARDS)),
      );
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.serial.idle(), this.step.idle()]);
  }

  /**
   * Folds everything committed before this call, every shard. A fold already running may have
   * started before it, so a caller waits for it and then folds again (cheap when nothing is left).
   */
  fold(): Promise<void> {
    return this.serial.run();
  }

  /**
   * The timer's step: folds the next shard in turn (one at a time) if its oldest recorded row
   * has waited at least half the interval.
   */
  foldStep(): Promise<void> {
    return this.step.run();
  }

  private async foldAll(): Promise<void> {
    for (let shard = 0; shard < HOURLY_SHARDS; shard++) await this.foldShard(shard);
  }

  private async foldNext(): Promise<void> {
    // Through the gate (DbJobGate): skipped quietly while Postgres is out of reach, and a step
    // failing because it is closes the gate (its one line); a read of usage still folds first
    // and answers its own error.
    await this.db.run(() => this.foldNextShard());
  }

  private async foldNextShard(): Promise<void> {
    const shard = this.nextShard;
    this.nextShard = (shard + 1) % HOURLY_SHARDS;
    const oldest = await this.flushes.oldestRecorded(shard);
    if (oldest === null) return;
    if (this.clock.now().getTime() - oldest.getTime() < this.config.USAGE_FOLD_MS / 2) return;
    await this.foldShard(shard);
  }

  private async foldShard(shard: number): Promise<void> {
    while ((await this.flushes.foldHourly(shard, FOLD_ROWS)) === FOLD_ROWS);
  }
}
