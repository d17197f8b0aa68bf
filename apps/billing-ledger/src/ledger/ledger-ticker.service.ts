import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { StatePublisher } from '../state/state-publisher.service';
import { LedgerService } from './ledger.service';
import { SerialRun } from './serial-run';

/**
 * The periodic work whose timing is a rule: clearing top-ups, allowance resets (07:30 UTC for
 * Free, renewal for paid plans), and re-publishing anything NATS did not take. Every rule reads
 * the injected Clock; the interval only decides how often we look (tests call `tick()`).
 */
@Injectable()
export class LedgerTicker implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private readonly serial = new SerialRun(() => this.pass());

  constructor(
    private readonly ledger: LedgerService,
    private readonly publisher: StatePublisher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
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
    try {
      await this.ledger.clearDueTopUps();
      await this.ledger.resetDueAllowances();
    } catch (error) {
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'ledger tick failed',
      );
    }
    await this.publisher.flush();
  }
}
