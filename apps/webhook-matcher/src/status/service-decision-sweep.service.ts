import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { StatusService } from './status.service';

/** Candidates of each decision taken in one batch; a pass takes batches until one is short. */
export const SWEEP_BATCH = 500;
/** Batches of each decision in one pass at most (a bound, never reached in practice). */
export const SWEEP_MAX_BATCHES = 100;
/**
 * The transaction-scoped advisory lock one pass holds (`pg_try_advisory_xact_lock`): one replica
 * sweeps at a time. Advisory locks are per database, and each app has its own.
 */
export const SWEEP_LOCK_KEY = 'webhook-matcher.service-decision-sweep';

export const SWEEP_OPTIONS = Symbol('SWEEP_OPTIONS');
export interface SweepOptions {
  batch?: number;
  maxBatches?: number;
}

export interface SweepResult {
  autoPaused: string[];
  noBalancePaused: string[];
}

/**
 * The spec's two timed service decisions (30 minutes of failing deliveries with ≥ 20 attempts →
 * paused_auto; 30 minutes at zero balance with events to deliver → paused_no_balance) are due
 * when the 30 minutes are up, not when the next attempt's outcome arrives: with retry waits of
 * 15 and 30 minutes that came up to 30 minutes late, or never when no retry was due (QA). Every
 * `SERVICE_DECISION_SWEEP_MS` this finds the candidates (set-based, `DeliveriesRepository`
 * `autoPauseCandidates`, `noBalanceCandidates`) and hands each to the same StatusService
 * methods the delivery-health consumer calls, which decide with `shouldAutoPause` and
 * `shouldPauseForNoBalance` (libs/domain/webhooks status-machine) on facts read again inside
 * the decision's transaction, under the row locks: a candidate's row is only a hint, and a
 * success (or a cleared top-up) committed after it was read wins.
 *
 * A pass takes each decision's candidates `SWEEP_BATCH` at a time, each batch excluding the
 * ones this pass looked at already, until a batch comes back short (at most
 * `SWEEP_MAX_BATCHES`): a backlog is decided in one pass, not 500 every 30 s.
 *
 * One replica sweeps at a time: a pass runs inside a transaction on its own connection that
 * holds `pg_try_advisory_xact_lock(SWEEP_LOCK_KEY)`; a replica that does not get it skips the
 * pass (empty result). Transaction-scoped, not a session lock: TypeORM hands out pooled
 * connections, and a session lock that missed its unlock (a failed query, a lost reply) would
 * stay with a live pooled connection and block every other replica for as long as the process
 * runs; a transaction's lock ends with its commit or rollback, and with the connection if the
 * replica dies. The decisions themselves run in their own short transactions, so the lock's
 * transaction does nothing but wait (no snapshot held between its statements). Correctness
 * does not rest on it: a transition is still taken under the webhook's row lock and only from
 * active, so the consumer's decision racing a pass changes nothing twice. Passes go through the
 * app's DbJobGate: skipped while Postgres is out of reach; a pass failing for another reason is
 * logged and the next one retries. One pass at a time per replica; never throws.
 */
@Injectable()
export class ServiceDecisionSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepResult> | null = null;
  private readonly batch: number;
  private readonly maxBatches: number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly deliveries: DeliveriesRepository,
    private readonly status: StatusService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(SWEEP_OPTIONS) options: SweepOptions | null = null,
  ) {
    this.batch = options?.batch ?? SWEEP_BATCH;
    this.maxBatches = options?.maxBatches ?? SWEEP_MAX_BATCHES;
  }

  onApplicationBootstrap(): void {
    const every = this.config.SERVICE_DECISION_SWEEP_MS;
    if (every <= 0) return;
    this.timer = setInterval(() => void this.run(), every);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass (joining one in progress): the webhooks it paused. Never throws. */
  run(): Promise<SweepResult> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<SweepResult> {
    const result: SweepResult = { autoPaused: [], noBalancePaused: [] };
    try {
      await DbJobGate.of(this.dataSource).run(async () => {
        const runner = this.dataSource.createQueryRunner();
        try {
          await runner.startTransaction();
          const [lock]: { locked: boolean }[] = await runner.query(
            `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked`,
            [SWEEP_LOCK_KEY],
          );
          // Not locked: another replica is sweeping, and its pass takes these decisions.
          if (lock?.locked) await this.decide(result);
        } finally {
          // Commit or roll back, the lock ends with the transaction.
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => {});
          await runner.release();
        }
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'service decision sweep failed; the next one retries');
    }
    if (result.autoPaused.length + result.noBalancePaused.length > 0)
      this.logger.info(
        { autoPaused: result.autoPaused.length, noBalancePaused: result.noBalancePaused.length },
        'service decisions taken by the sweep',
      );
    return result;
  }

  private async decide(result: SweepResult): Promise<void> {
    const now = this.clock.now().getTime();
    const { autoPauseAfterMs, autoPauseMinAttempts, noBalancePauseAfterMs } = this.status.decisions;
    const seen: string[] = [];
    for (let batches = 0; batches < this.maxBatches; batches += 1) {
      const failing = await this.deliveries.autoPauseCandidates(
        new Date(now - autoPauseAfterMs),
        autoPauseMinAttempts,
        this.batch,
        seen,
      );
      for (const c of failing) {
        seen.push(c.webhook_id);
        const paused = await this.status.applyDeliveryHealth(c.webhook_id, {
          failingSince: c.failing_since,
          attemptsSinceFailing: c.attempts_since_failing,
        });
        if (paused) result.autoPaused.push(c.webhook_id);
      }
      if (failing.length < this.batch) break;
    }
    seen.length = 0;
    for (let batches = 0; batches < this.maxBatches; batches += 1) {
      const waiting = await this.deliveries.noBalanceCandidates(
        new Date(now - noBalancePauseAfterMs),
        this.batch,
        seen,
      );
      for (const id of waiting) {
        seen.push(id);
        if (await this.status.applyNoBalance(id, { hasEventsToDeliver: true }))
          result.noBalancePaused.push(id);
      }
      if (waiting.length < this.batch) break;
    }
  }
}
