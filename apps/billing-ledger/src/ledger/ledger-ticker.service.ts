import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { USAGE_PART_RETENTION_MS } from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { StatePublisher } from '../state/state-publisher.service';
import { UsageFlushesRepository } from '../usage/usage-flushes.repository';
import { LedgerService } from './ledger.service';
import { SerialRun } from './serial-run';

/** Applied-part records forgotten per pass at most (the fleet applies ~64 parts a second). */
const PRUNE_BATCH = 5_000;

/**
 * The periodic work whose timing is a rule: clearing top-ups, allowance resets (07:30 UTC for
 * Free, renewal for paid plans), forgetting applied usage parts the stream can no longer
 * deliver (`USAGE_PART_RETENTION_MS`), and re-publishing anything NATS did not take. Every rule
 * reads the injected Clock; the interval only decides how often we look (tests call `tick()`).
 */
@Injectable()
export class LedgerTicker implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private readonly serial = new SerialRun(() => this.pass());

  constructor(
    private readonly ledger: LedgerService,
    private readonly publisher: StatePublisher,
    private readonly flushes: UsageFlushesRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly db: DbJobGate,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.LEDGER_TICK_MS > 0) {
      this.timer = setInterval(
        () => void this.tick().catch(() => undefined),
        this.config.LEDGER_TICK_MS,
      );
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.serial.idle();
  }

  /** One pass; overlapping calls wait for the running one and then run again. */
  tick(): Promise<void> {
    return this.serial.run();
  }

  private async pass(): Promise<void> {
    // Through the gate (DbJobGate): while Postgres is out of reach every query would fail, a
    // line a second after the gate's one line; skipped quietly, and a pass failing because it is
    // closes the gate. The first pass after it opens catches up.
    if (!this.db.open) return;
    try {
      await this.db.run(async () => {
        await this.ledger.clearDueTopUps();
        await this.ledger.resetDueAllowances();
        await this.flushes.prune(
          new Date(this.clock.now().getTime() - USAGE_PART_RETENTION_MS),
          PRUNE_BATCH,
        );
      });
    } catch (error) {
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'ledger tick failed',
      );
    }
    await this.publisher.flush();
  }
}
