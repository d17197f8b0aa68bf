import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import type { DbJobGate } from './db-job-gate';

/**
 * One statement of a pruner: deletes up to `limit` rows that expired before `before`, oldest
 * first, in its own short transaction; answers how many it deleted.
 */
export type PruneBatch = (before: Date, limit: number) => Promise<number>;

export interface RetentionPrunerOptions {
  /** What is pruned, for the log line of a run that failed ("delivery log"). */
  name: string;
  clock: Clock;
  /** Rows older than this (by the clock) are deleted. */
  retentionMs: number;
  /** How often a run starts (0: never on its own; `prune` only). */
  intervalMs: number;
  /** Rows per statement (default 5,000). */
  batch?: number;
  /** Statements per run at most (default 100), so that one run never holds a connection long. */
  batchesPerRun?: number;
  /** The rows a run deleted, when it deleted any. */
  onPruned?: (count: number) => void;
  logger?: Pick<Logger, 'warn'>;
  /**
   * The app's `DbJobGate`: while Postgres is not connected a run is skipped quietly (deletes
   * nothing), not a "Driver not Connected" warning every interval after the cause's one line.
   */
  gate?: Pick<DbJobGate, 'run'>;
}

/**
 * Keeps a log to its retention by deleting what expired, every `intervalMs`, oldest first, in
 * short statements of `batch` rows until one finds fewer or the run's budget is spent. The
 * defaults (5,000 × 100 a run) give a run of every 10 s ~50,000 rows a second: a log written
 * faster than that for long would outgrow its retention, so size `batch` and the interval to the
 * log's rate. One run at a time; a run that fails is logged and the next one retries.
 */
export class RetentionPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopping = false;

  constructor(
    private readonly deleteBatch: PruneBatch,
    private readonly options: RetentionPrunerOptions,
  ) {}

  start(): void {
    this.stopping = false;
    if (this.options.intervalMs <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.prune(), this.options.intervalMs);
    this.timer.unref();
  }

  /**
   * Stops the timer; a run in progress ends after its current statement, so that a catch-up of
   * many statements never holds a shutdown.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Deletes what expired (joining a run in progress); the rows deleted. Never throws. */
  prune(): Promise<number> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<number> {
    const { clock, retentionMs, batch = 5_000, batchesPerRun = 100, gate } = this.options;
    const before = new Date(clock.now().getTime() - retentionMs);
    let deleted = 0;
    const batches = async (): Promise<void> => {
      for (let i = 0; i < batchesPerRun; i++) {
        const n = await this.deleteBatch(before, batch);
        deleted += n;
        if (n < batch || this.stopping) break;
      }
    };
    try {
      // Through the gate: skipped while Postgres is out of reach, and a run failing because it
      // is reports the outage (one line, the gate's) instead of a warning per run.
      await (gate ? gate.run(batches) : batches());
    } catch (error) {
      this.options.logger?.warn(
        { err: error instanceof Error ? error.message : String(error), deleted },
        `${this.options.name} retention failed; the next run retries`,
      );
    }
    if (deleted > 0) this.options.onPruned?.(deleted);
    return deleted;
  }
}
