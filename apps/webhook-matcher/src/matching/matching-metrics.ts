import type { ChainBlock, Partition } from '@meridian/contracts';
import type { Clock } from '@meridian/time';
import { Counter, Gauge, type Registry } from 'prom-client';

/** Why a matched event was not published. The budget is the only reason the matcher drops. */
export type MatchDropReason = 'rate_limited';

/** What publishing a batch of delivery jobs came to (DeliveryJobPublisher.publishAll). */
export interface PublishTally {
  /** Taken by the stream. */
  readonly published: number;
  /** Refused by the stream as a duplicate id (a redelivered block's jobs). */
  readonly duplicates: number;
  /** Not taken (NATS refused or did not answer): the block is retried. */
  readonly failed: number;
}

/** The new events of one block (or block part), counted once per block, never per address. */
export interface BlockTally {
  /** (webhook, activity) events recorded for the first time, admitted or dropped. */
  readonly matched: number;
  /** Of those, dropped by the account's events budget. */
  readonly rateLimited: number;
}

/**
 * Seconds between the indexer publishing a block (`publishedAt`, its clock) and this replica
 * having matched it and published its jobs (`now`, ours): the time the block waited for the
 * matcher, the chain's and the indexer's own delays excluded (those are the indexer's
 * `chain_indexer_head_lag_seconds`). Never negative (clocks a little apart).
 */
export function matchLagSeconds(publishedAt: string, now: Date): number {
  const published = Date.parse(publishedAt);
  if (Number.isNaN(published)) return 0;
  return Math.max(0, (now.getTime() - published) / 1000);
}

/** The partition label, as MATCHER_PARTITION spells it. */
export function partitionLabel(partition: Partition): string {
  return `${partition.index}/${partition.count}`;
}

/**
 * webhook-matcher's pipeline metrics (README "Metrics"). Labels are network, partition, reason
 * and outcome only: never an account, webhook, address or URL. Updated once per block or per
 * batch of jobs, off the per-address matching loop.
 */
export class MatchingMetrics {
  private readonly lastBlock: Gauge<'network'>;
  private readonly lastBlockTime: Gauge<'network'>;
  private readonly lag: Gauge<'network'>;
  private readonly lastStepSuccess: Gauge<'network'>;
  private readonly blocks: Counter<'network'>;
  private readonly events: Counter<'network'>;
  private readonly dropped: Counter<'network' | 'reason'>;
  private readonly jobs: Counter<'network' | 'outcome'>;
  private readonly publishFailures: Counter<'network'>;

  constructor(
    registry: Registry,
    private readonly clock: Clock,
    partition: Partition,
    /** Whether this replica's CHAIN consumer is attached (ConsumerRunner.ready), read at scrape. */
    consuming: () => boolean,
  ) {
    const registers = [registry];
    this.lastBlock = new Gauge({
      name: 'webhook_matcher_last_block_number',
      help: 'Number of the last block this replica matched and published the jobs of',
      labelNames: ['network'],
      registers,
    });
    this.lastBlockTime = new Gauge({
      name: 'webhook_matcher_last_block_timestamp_seconds',
      help: 'Block timestamp (chain time, unix seconds) of the last block this replica matched',
      labelNames: ['network'],
      registers,
    });
    this.lag = new Gauge({
      name: 'webhook_matcher_lag_seconds',
      help:
        "Seconds from chain-indexer's publication of the last block matched to the end of " +
        'matching it (the time it waited for this replica); set per block, so it stands still ' +
        'while no block comes',
      labelNames: ['network'],
      registers,
    });
    this.lastStepSuccess = new Gauge({
      name: 'webhook_matcher_last_step_success_timestamp_seconds',
      help:
        'Unix time of the last block or reorg removal this replica handled to the end, or of ' +
        'its start; frozen while matching fails or hangs',
      labelNames: ['network'],
      registers,
    });
    this.blocks = new Counter({
      name: 'webhook_matcher_blocks_matched_total',
      help: 'CHAIN blocks matched to the end (a redelivered block counts again)',
      labelNames: ['network'],
      registers,
    });
    this.events = new Counter({
      name: 'webhook_matcher_events_matched_total',
      help: 'Events (webhook, activity) matched for the first time, dropped ones included',
      labelNames: ['network'],
      registers,
    });
    this.dropped = new Counter({
      name: 'webhook_matcher_events_dropped_total',
      help: "Matched events not published (rate_limited: over the account's events budget)",
      labelNames: ['network', 'reason'],
      registers,
    });
    this.jobs = new Counter({
      name: 'webhook_matcher_delivery_jobs_published_total',
      help:
        'Delivery jobs (every phase) published on WEBHOOK (outcome published, or duplicate: ' +
        'refused by the stream as one it holds)',
      labelNames: ['network', 'outcome'],
      registers,
    });
    this.publishFailures = new Counter({
      name: 'webhook_matcher_delivery_job_publish_failures_total',
      help: 'Delivery jobs NATS did not take (the block is retried)',
      labelNames: ['network'],
      registers,
    });
    const label = partitionLabel(partition);
    new Gauge({
      name: 'webhook_matcher_partition_consuming',
      help: "1 while this replica's CHAIN consumer for its partition (MATCHER_PARTITION) is attached",
      labelNames: ['partition'],
      registers,
      collect() {
        this.set({ partition: label }, consuming() ? 1 : 0);
      },
    });
    // How many partitions the accounts are split into (MATCHER_PARTITION's n): against the
    // partitions consumed, a partition no replica consumes, its pod gone with its series, shows.
    new Gauge({
      name: 'webhook_matcher_partitions',
      help: 'Partitions the accounts are split into (MATCHER_PARTITION i/n: n)',
      registers,
    }).set(partition.count);
  }

  /**
   * At start, for every network served: the stall clock starts with the process (a replica that
   * never gets to matching, e.g. its index load failing, ages from here), and the failure counter
   * exists at 0 so its first failure is an increase.
   */
  started(networks: readonly string[]): void {
    const now = this.seconds();
    for (const network of networks) {
      this.lastStepSuccess.set({ network }, now);
      this.publishFailures.inc({ network }, 0);
      this.dropped.inc({ network, reason: 'rate_limited' }, 0);
    }
  }

  /**
   * A block's new events recorded with their budget decisions (before its jobs are published,
   * so a block retried after a failed publish does not count them again).
   */
  eventsRecorded(network: string, tally: BlockTally): void {
    if (tally.matched > 0) this.events.inc({ network }, tally.matched);
    if (tally.rateLimited > 0)
      this.dropped.inc({ network, reason: 'rate_limited' }, tally.rateLimited);
  }

  /** A block (part) matched and its jobs published. */
  blockMatched(block: ChainBlock): void {
    const network = block.network;
    const now = this.clock.now();
    this.lastBlock.set({ network }, block.number);
    this.lastBlockTime.set({ network }, block.timestamp);
    this.lag.set({ network }, matchLagSeconds(block.publishedAt, now));
    this.lastStepSuccess.set({ network }, now.getTime() / 1000);
    if (block.part.index === block.part.count - 1) this.blocks.inc({ network });
  }

  /** A reorg's removal handled to the end. */
  removalHandled(network: string): void {
    this.lastStepSuccess.set({ network }, this.seconds());
  }

  /** A batch of delivery jobs settled (also when part of it failed). */
  jobsSettled(network: string, tally: PublishTally): void {
    if (tally.published > 0) this.jobs.inc({ network, outcome: 'published' }, tally.published);
    if (tally.duplicates > 0) this.jobs.inc({ network, outcome: 'duplicate' }, tally.duplicates);
    if (tally.failed > 0) this.publishFailures.inc({ network }, tally.failed);
  }

  private seconds(): number {
    return this.clock.now().getTime() / 1000;
  }
}
