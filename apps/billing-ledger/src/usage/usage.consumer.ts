import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import {
  compactFlush,
  Consumers,
  Events,
  ledgerUsageConsumers,
  type UsageFlushedV2,
  type UsageRecorded,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { isDataException, StatementBatcher } from '@meridian/platform-db';
import { isEvent, JetStreamConsumers, type ConsumedMessage } from '@meridian/platform-messaging';
import { Counter, Histogram, Registry } from 'prom-client';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import {
  LedgerService,
  type FlushDelivery,
  type FlushOutcome,
  type UsageOutcome,
} from '../ledger/ledger.service';
import { flushPart, type FlushAggregate, type FlushPart } from './flush-aggregate';
import { FlushPipeline, unappliableUsage } from './flush-pipeline';

/**
 * Usage transactions one replica runs at once: one. Every flush part of a fleet second touches
 * the same accounts, so two transactions at once only waited on each other's row locks
 * (pg_stat_activity in the ledger bench: the second one in `Lock: transactionid` most of the
 * time); one transaction of more parts writes one journal per account for more items instead.
 * Flush parts go through FlushPipeline: the next batch is summed while this one runs.
 */
export const USAGE_TRANSACTIONS = 1;

/**
 * `billing-ledger-usage`: applies each usage message exactly once. Flush parts (ADR 0103/0104)
 * are grouped into set-based transactions that record the part ids with the CU; the older
 * per-account events keep their journal idempotency key. A message is acked after the commit;
 * a redelivery (lost ack, crash in between, repeat publish) finds its id and changes nothing.
 * A body failing its schema never reaches here: the runner dead-letters it
 * (`messaging_dead_lettered_total{reason="invalid_payload"}`).
 */
@Injectable()
export class UsageConsumer implements OnApplicationBootstrap {
  private readonly events: StatementBatcher<UsageRecorded, UsageOutcome>;
  private readonly flushes: FlushPipeline;
  private readonly applied: Counter<'outcome'>;
  private readonly items: Counter;
  private readonly parked: Counter;
  private readonly lag: Histogram;
  /** Test seam: runs after the commit and before the ack (a crash there must lose nothing). */
  afterApply: ((applied: { id: string }) => Promise<void>) | undefined;

  constructor(
    private readonly consumers: JetStreamConsumers,
    private readonly ledger: LedgerService,
    registry: Registry,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'LEDGER_PARTITION'>,
  ) {
    // The declaration is the one source of the parallelism: `concurrency` messages in flight
    // (max_ack_pending is provisioned from it), applied as shared transactions, one at a time.
    // A failed transaction fails its messages (redelivered), not one transaction per message,
    // unless it failed on a value Postgres cannot store (`isDataException`): then each message
    // runs alone, the rest commit, and the one that fails alone is refused for good.
    // Flush parts: whatever arrived while a transaction ran is the next one, already summed.
    this.events = new StatementBatcher((events) => this.ledger.applyUsage(events), {
      maxBatch: Math.ceil(Consumers.ledgerUsage.concurrency / 2),
      parallel: USAGE_TRANSACTIONS,
      retryAlone: isDataException,
    });
    this.flushes = new FlushPipeline((deliveries, aggregate) =>
      this.applyFlushes(deliveries, aggregate),
    );
    this.applied = new Counter({
      name: 'billing_usage_messages_total',
      help: 'Usage messages handled, by outcome (applied, duplicate)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.items = new Counter({
      name: 'billing_usage_account_items_total',
      help: 'Account usage items (node method lines, webhook lines) applied',
      registers: [registry],
    });
    this.parked = new Counter({
      name: 'billing_usage_parked_total',
      help: 'Account entries of usage flushes parked (dead-lettered) for an unknown account',
      registers: [registry],
    });
    this.lag = new Histogram({
      name: 'billing_usage_apply_lag_seconds',
      help: 'End of a usage window to the commit that applied it',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    });
  }

  /**
   * This replica's partition of the usage (ADR 0105 step 3): its durables all feed the one
   * pipeline, so its transactions still run one at a time.
   */
  onApplicationBootstrap(): void {
    for (const declaration of ledgerUsageConsumers(this.config.LEDGER_PARTITION))
      this.consumers.run(declaration, (message) => this.handle(message));
  }

  handle(message: ConsumedMessage): Promise<void> {
    // Summed now; what waits for the commit is the part (header, totals, the message's bytes),
    // not `message`, whose decoded entries would outlive every young collection. A v1 part
    // (a producer not yet upgraded) is summed as the compact part it stands for (ADR 0105).
    if (isEvent(message, Events.usageFlushedV2))
      return this.submitFlush(message, message.payload, 2);
    if (isEvent(message, Events.usageFlushed))
      return this.submitFlush(message, compactFlush(message.payload), 1);
    return this.handleEvent(message);
  }

  private submitFlush(message: ConsumedMessage, flush: UsageFlushedV2, version: 1 | 2) {
    const delivery: FlushDelivery = {
      part: flushPart(flush, message.data, version),
      streamSequence: message.streamSequence,
      deliveryCount: message.deliveryCount,
    };
    return this.handleFlush(this.flushes.submit(delivery, flush), delivery.part);
  }

  private async handleFlush(submitted: Promise<FlushOutcome>, part: FlushPart): Promise<void> {
    const outcome = await submitted;
    this.applied.inc({ outcome: outcome.status });
    if (outcome.parked > 0) this.parked.inc(outcome.parked);
    await this.afterApply?.(part);
  }

  private async handleEvent(message: ConsumedMessage): Promise<void> {
    if (!isEvent(message, Events.usageRecorded)) {
      throw new DomainError(
        'unexpected_event',
        'invalid',
        `unexpected ${message.event.type} on the usage consumer`,
        { retryable: false },
      );
    }
    const outcome = await this.events.submit(message.payload).catch((error: unknown) => {
      throw isDataException(error) ? unappliableUsage(error) : error;
    });
    if (outcome.status === 'unknown_account') {
      // Not retryable: parked on the dead-letter subject, never silently dropped.
      throw new DomainError(
        'unknown_account',
        'not_found',
        `usage for unknown account ${message.payload.accountId}`,
        { retryable: false },
      );
    }
    this.applied.inc({ outcome: outcome.status });
    await this.afterApply?.(message.payload);
  }

  private async applyFlushes(
    deliveries: readonly FlushDelivery[],
    aggregate?: FlushAggregate,
  ): Promise<FlushOutcome[]> {
    const result = await this.ledger.applyFlushes(deliveries, aggregate);
    this.items.inc(result.items);
    const nowMs = Date.now();
    for (const [i, d] of deliveries.entries())
      if (result.outcomes[i]!.status === 'applied')
        this.lag.observe(Math.max(0, nowMs - Date.parse(d.part.windowEnd)) / 1000);
    return result.outcomes;
  }
}
