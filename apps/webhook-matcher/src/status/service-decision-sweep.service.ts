import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
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

/** Candidates of each decision looked at in one pass at most (the rest wait for the next). */
export const SWEEP_BATCH = 500;

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
 * `shouldPauseForNoBalance` (libs/domain/webhooks status-machine).
 *
 * Every replica sweeps: a transition is taken under the webhook's row lock (FOR UPDATE) and only
 * from active, so a second replica's (or the consumer's) decision changes nothing. Passes go
 * through the app's DbJobGate: skipped while Postgres is out of reach; a pass failing for
 * another reason is logged and the next one retries. One pass at a time; never throws.
 */
@Injectable()
export class ServiceDecisionSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepResult> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly deliveries: DeliveriesRepository,
    private readonly status: StatusService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

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
        const now = this.clock.now().getTime();
        const { autoPauseAfterMs, autoPauseMinAttempts, noBalancePauseAfterMs } =
          this.status.decisions;
        const failing = await this.deliveries.autoPauseCandidates(
          new Date(now - autoPauseAfterMs),
          autoPauseMinAttempts,
          SWEEP_BATCH,
        );
        for (const c of failing) {
          const paused = await this.status.applyDeliveryHealth(c.webhook_id, {
            failingSince: c.failing_since,
            attemptsSinceFailing: c.attempts_since_failing,
          });
          if (paused) result.autoPaused.push(c.webhook_id);
        }
        const waiting = await this.deliveries.noBalanceCandidates(
          new Date(now - noBalancePauseAfterMs),
          SWEEP_BATCH,
        );
        for (const id of waiting)
          if (await this.status.applyNoBalance(id, { hasEventsToDeliver: true }))
            result.noBalancePaused.push(id);
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'service decision sweep failed; the next one retries');
    }
    if (result.autoPaused.length + result.noBalancePaused.length > 0)
      this.logger.info(result, 'service decisions taken by the sweep');
    return result;
  }
}
