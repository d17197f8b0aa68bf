import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { RetentionPruner, type PruneBatch, type RetentionPrunerOptions } from './retention-pruner';

/** The counter of a retention job's deleted rows, on the app's registry. */
export interface RetentionJobMetric {
  registry: Registry;
  /** Dashboards and alerts read `name`: it is part of the app's contract. */
  metric: { name: string; help: string };
}

/**
 * An app's retention job: a `RetentionPruner` started with the app and stopped with it, whose
 * deleted rows are counted in `metric`. A subclass is the app's injectable: its constructor
 * gives the delete statement, the retention and the interval.
 */
export abstract class RetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pruner: RetentionPruner;

  protected constructor(
    deleteBatch: PruneBatch,
    options: Omit<RetentionPrunerOptions, 'onPruned'>,
    { registry, metric }: RetentionJobMetric,
  ) {
    const pruned = new Counter({ name: metric.name, help: metric.help, registers: [registry] });
    this.pruner = new RetentionPruner(deleteBatch, {
      ...options,
      onPruned: (count) => pruned.inc(count),
    });
  }

  onApplicationBootstrap(): void {
    this.pruner.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.pruner.stop();
  }

  /** Deletes what expired (one run at a time); the count deleted. Never throws. */
  prune(): Promise<number> {
    return this.pruner.prune();
  }
}
