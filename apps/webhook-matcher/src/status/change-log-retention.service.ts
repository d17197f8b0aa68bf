import { Inject, Injectable } from '@nestjs/common';
import { DbJobGate, RetentionJob } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { HOUR, MINUTE, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { pruneChanges } from './change-log';

/** How often the change feed's old rows are deleted. */
export const CHANGE_LOG_PRUNE_INTERVAL_MS = MINUTE;

/**
 * The change feed (`webhooks.change_log`) is read only near its head (ADR 0402 amendment): a
 * running matcher reads `seq > ` its low-water mark, which trails the newest row by at most the
 * gap timeout (30 s) while it polls every 250 ms; a starting one reads the last 60 s. Cursors
 * live in memory, so the rule is by age: every `CHANGE_LOG_PRUNE_INTERVAL_MS` the rows written
 * more than `CHANGE_LOG_RETENTION_HOURS` ago (default 24, at least 1: the rest is a safety
 * window for a matcher whose polls stall) are deleted by the shared `RetentionPruner` (through
 * `DbJobGate`), counted in `webhook_matcher_change_log_pruned_total`. Ages are the database's
 * clock (`at` is its `now()`, and so are the readers' windows), not the app's.
 */
@Injectable()
export class ChangeLogRetention extends RetentionJob {
  constructor(
    db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) clock: Clock,
    @Inject(LOGGER) logger: Logger,
    gate: DbJobGate,
    registry: Registry,
  ) {
    const retentionMs = config.CHANGE_LOG_RETENTION_HOURS * HOUR;
    super(
      // The rows' ages are the database's (`pruneChanges`): `before` is not used.
      (_before, limit) => pruneChanges(db, retentionMs, limit),
      {
        name: 'change log',
        clock,
        retentionMs,
        intervalMs: CHANGE_LOG_PRUNE_INTERVAL_MS,
        logger,
        gate,
      },
      {
        registry,
        metric: {
          name: 'webhook_matcher_change_log_pruned_total',
          help: 'Change feed rows deleted, older than CHANGE_LOG_RETENTION_HOURS',
        },
      },
    );
  }
}
