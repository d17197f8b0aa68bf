import { DAY, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import type { AttemptsRepository } from './attempts.repository';

export interface AttemptLogRetentionOptions {
  clock: Clock;
  retentionDays: number;
  /** How often a run starts (0 = never on its own: `prune` only). */
  intervalMs: number;
  /** Attempts deleted per statement (its own transaction). */
  batch?: number;
  /** Statements per run at most, so one run never holds the pool for long. */
  batchesPerRun?: number;
  onPruned?: (count: number) => void;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * The attempt log keeps `ATTEMPT_LOG_RETENTION_DAYS` of attempts; every `ATTEMPT_LOG_PRUNE_MS`
 * the older ones are deleted, oldest first, in short statements of a bounded size, until none is
 * left or the run's budget is spent. The budget (5,000 × 100 a run, every 10 s by default) is
 * ~50,000 rows a second, several times what one worker attempts, so a run catches up with the
 * day that expired; a log that grew before this existed shrinks by that much a run.
 *
 * What may go: an attempt whose job no stream can deliver again (the minimum retention,
 * `DELIVERY_LOG_MIN_RETENTION_MS`), and whose 25 CU have left in a usage part (ADR 0431). An
 * attempt still waiting for its part is kept whatever its age (`AttemptsRepository.prune`).
 */
export class AttemptLogRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly attempts: AttemptsRepository,
    private readonly options: AttemptLogRetentionOptions,
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.prune(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Deletes expired attempts (one run at a time); the count deleted. Never throws. */
  prune(): Promise<number> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<number> {
    const { clock, retentionDays, batch = 5_000, batchesPerRun = 100 } = this.options;
    const before = new Date(clock.now().getTime() - retentionDays * DAY);
    let deleted = 0;
    try {
      for (let i = 0; i < batchesPerRun; i++) {
        const n = await this.attempts.prune(before, batch);
        deleted += n;
        if (n < batch) break;
      }
    } catch (error) {
      this.options.logger?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'attempt log retention failed; the next run retries',
      );
    }
    if (deleted > 0) this.options.onPruned?.(deleted);
    return deleted;
  }
}
