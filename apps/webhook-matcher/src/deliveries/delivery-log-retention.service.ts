import { Inject, Injectable } from '@nestjs/common';
import { DbJobGate, RetentionJob } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { DAY, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { DeliveriesRepository } from './deliveries.repository';

/**
 * The delivery log keeps `DELIVERY_LOG_RETENTION_DAYS` of attempts (each with its payload and
 * the receiver's answer); every `DELIVERY_LOG_PRUNE_MS` the older ones are deleted by the shared
 * `RetentionPruner` (5,000 a statement, up to 100 statements a run: ~50,000 a second at the
 * default 10 s, beyond any delivery rate of one fleet), so the log's size follows the deliveries
 * of the retention, not of all time. What it deletes is counted in
 * `webhook_matcher_delivery_log_pruned_total` (as delivery-worker's attempt log).
 */
@Injectable()
export class DeliveryLogRetention extends RetentionJob {
  constructor(
    deliveries: DeliveriesRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) clock: Clock,
    @Inject(LOGGER) logger: Logger,
    gate: DbJobGate,
    registry: Registry,
  ) {
    super(
      (before, limit) => deliveries.prune(before, limit),
      {
        name: 'delivery log',
        clock,
        retentionMs: config.DELIVERY_LOG_RETENTION_DAYS * DAY,
        intervalMs: config.DELIVERY_LOG_PRUNE_MS,
        logger,
        gate,
      },
      {
        registry,
        metric: {
          name: 'webhook_matcher_delivery_log_pruned_total',
          help: 'Attempts deleted from the delivery log, older than DELIVERY_LOG_RETENTION_DAYS',
        },
      },
    );
  }
}
