import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SerialRun } from '../ledger/serial-run';
import { UsageFlushesRepository } from './usage-flushes.repository';

/**
 * Recorded rows folded per transaction: a usage transaction records one, about one a second at
 * a fleet's shape, so a fold every 30 s takes them all in one statement (its upserts, the cost,
 * are per distinct key, not per row).
 */
const FOLD_ROWS = 64;

/**
 * Folds the hourly usage that usage transactions record (one row of arrays each) into
 * `usage_hourly` (ADR 0104): every `USAGE_FOLD_MS`, and before every read of usage, so what
 * the usage API answers includes every committed transaction. A fold adds each busy account's
 * rollup rows once for all the transactions since the last one instead of once per transaction,
 * and keeps those upserts off the usage transaction (and the balance-state lag).
 */
@Injectable()
export class HourlyFolder implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private readonly serial = new SerialRun(() => this.foldAll());

  constructor(
    private readonly flushes: UsageFlushesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.USAGE_FOLD_MS > 0) {
      this.timer = setInterval(
        () =>
          void this.fold().catch((error: unknown) =>
            this.logger.warn(
              { err: error instanceof Error ? error.message : String(error) },
              'hourly usage fold failed; the next one takes it',
            ),
          ),
        this.config.USAGE_FOLD_MS,
      );
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.serial.idle();
  }

  /**
   * Folds everything committed before this call. A fold already running may have started
   * before it, so a caller waits for it and then folds again (cheap when nothing is left).
   */
  fold(): Promise<void> {
    return this.serial.run();
  }

  private async foldAll(): Promise<void> {
    while ((await this.flushes.foldHourly(FOLD_ROWS)) === FOLD_ROWS);
  }
}
