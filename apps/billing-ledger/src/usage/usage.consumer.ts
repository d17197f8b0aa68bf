import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Consumers, Events, type UsageRecorded } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { isEvent, JetStreamConsumers, type ConsumedMessage } from '@meridian/platform-messaging';
import { LedgerService } from '../ledger/ledger.service';
import { UsageBatcher } from './usage-batcher';

/** Usage transactions one replica runs at once (each holds up to concurrency / 2 events). */
export const USAGE_TRANSACTIONS = 2;

/**
 * `billing-ledger-usage`: applies each usage event exactly once. The ledger keeps the usage id
 * as the journal's unique idempotency key, written in the same transaction as the CU; the
 * message is acked after the commit. A redelivery (lost ack, crash in between, repeat publish)
 * finds the key and is acked without changing anything.
 */
@Injectable()
export class UsageConsumer implements OnApplicationBootstrap {
  private readonly batcher: UsageBatcher;
  /** Test seam: runs after the commit and before the ack (a crash there must lose nothing). */
  afterApply: ((event: UsageRecorded) => Promise<void>) | undefined;

  constructor(
    private readonly consumers: JetStreamConsumers,
    private readonly ledger: LedgerService,
  ) {
    // The declaration is the one source of the parallelism: `concurrency` messages in flight
    // (max_ack_pending is provisioned from it), applied as up to two shared transactions.
    this.batcher = new UsageBatcher(
      (events) => this.ledger.applyUsage(events),
      Math.ceil(Consumers.ledgerUsage.concurrency / USAGE_TRANSACTIONS),
      USAGE_TRANSACTIONS,
    );
  }

  onApplicationBootstrap(): void {
    this.consumers.run(Consumers.ledgerUsage, (message) => this.handle(message));
  }

  async handle(message: ConsumedMessage): Promise<void> {
    if (!isEvent(message, Events.usageRecorded)) {
      throw new DomainError(
        'unexpected_event',
        'invalid',
        `unexpected ${message.event.type} on the usage consumer`,
        { retryable: false },
      );
    }
    const outcome = await this.batcher.submit(message.payload);
    if (outcome.status === 'unknown_account') {
      // Not retryable: parked on the dead-letter subject, never silently dropped.
      throw new DomainError(
        'unknown_account',
        'not_found',
        `usage for unknown account ${message.payload.accountId}`,
        { retryable: false },
      );
    }
    await this.afterApply?.(message.payload);
  }
}
