import { Inject, Injectable } from '@nestjs/common';
import { DbJobGate, RetentionJob } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { DAY, MINUTE, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { OutboxRepository } from './outbox.repository';

/** How often published events past the retention are deleted. */
export const OUTBOX_PRUNE_INTERVAL_MS = 10 * MINUTE;

/**
 * The outbox's events are read once, to be relayed (`published_at IS NULL`); a published one is
 * only a record of what went out. Every `OUTBOX_PRUNE_INTERVAL_MS` those published more than
 * `OUTBOX_RETENTION_DAYS` ago are deleted by the shared `RetentionPruner` (through `DbJobGate`),
 * counted in `billing_outbox_pruned_total`; an unpublished event is kept whatever its age.
 */
@Injectable()
export class OutboxRetention extends RetentionJob {
  constructor(
    outbox: OutboxRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) clock: Clock,
    @Inject(LOGGER) logger: Logger,
    gate: DbJobGate,
    registry: Registry,
  ) {
    super(
      (before, limit) => outbox.prunePublished(before, limit),
      {
        name: 'outbox',
        clock,
        retentionMs: config.OUTBOX_RETENTION_DAYS * DAY,
        intervalMs: OUTBOX_PRUNE_INTERVAL_MS,
        logger,
        gate,
      },
      {
        registry,
        metric: {
          name: 'billing_outbox_pruned_total',
          help: 'Published outbox events deleted, older than OUTBOX_RETENTION_DAYS',
        },
      },
    );
  }
}
