import { Inject, Injectable } from '@nestjs/common';
import { DbJobGate, RetentionJob } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { MINUTE, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { CLOCK } from '../clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SessionsRepository } from './sessions.repository';

/** How often ended sessions are deleted. */
export const SESSIONS_PRUNE_INTERVAL_MS = 10 * MINUTE;

/**
 * A session that ended (past `SESSION_TTL_MS`, or idle `SESSION_IDLE_MS`) is deleted when its
 * cookie comes back, but most never come back: every `SESSIONS_PRUNE_INTERVAL_MS` the ended
 * ones are deleted by the shared `RetentionPruner` (through `DbJobGate`), counted in
 * `dashboard_sessions_pruned_total`. Nothing reads an ended session, so none is kept.
 */
@Injectable()
export class SessionsRetention extends RetentionJob {
  constructor(
    sessions: SessionsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) clock: Clock,
    @Inject(LOGGER) logger: Logger,
    gate: DbJobGate,
    registry: Registry,
  ) {
    const idleMs = config.SESSION_IDLE_MS;
    super(
      (now, limit) => sessions.deleteExpired(now, new Date(now.getTime() - idleMs), limit),
      {
        name: 'sessions',
        clock,
        // Ended is ended: `before` is the clock's now.
        retentionMs: 0,
        intervalMs: SESSIONS_PRUNE_INTERVAL_MS,
        logger,
        gate,
      },
      {
        registry,
        metric: {
          name: 'dashboard_sessions_pruned_total',
          help: 'Ended sessions (expired or idle) deleted',
        },
      },
    );
  }
}
