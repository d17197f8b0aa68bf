import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import { DAY, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { DeliveriesRepository } from './deliveries.repository';

/** Attempts deleted per statement, and statements per run at most. */
const BATCH = 1_000;
const BATCHES_PER_RUN = 20;

/**
 * The delivery log keeps `DELIVERY_LOG_RETENTION_DAYS` of attempts (each with its payload and
 * the receiver's answer); every `DELIVERY_LOG_PRUNE_MS` the older ones are deleted, a bounded
 * number a run, so the log's size follows the deliveries of the retention, not of all time.
 */
@Injectable()
export class DeliveryLogRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.DELIVERY_LOG_PRUNE_MS > 0) {
      this.timer = setInterval(() => void this.prune(), this.config.DELIVERY_LOG_PRUNE_MS);
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Deletes expired attempts (one run at a time); the count deleted. Never throws. */
  prune(): Promise<number> {
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<number> {
    const before = new Date(
      this.clock.now().getTime() - this.config.DELIVERY_LOG_RETENTION_DAYS * DAY,
    );
    let deleted = 0;
    try {
      for (let i = 0; i < BATCHES_PER_RUN; i++) {
        const n = await this.deliveries.prune(before, BATCH);
        deleted += n;
        if (n < BATCH) break;
      }
    } catch (error) {
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'delivery log retention failed; the next run retries',
      );
    }
    return deleted;
  }
}
