import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Consumers, Events, type UsageRecorded } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { isEvent, JetStreamConsumers, type ConsumedMessage } from '@meridian/platform-messaging';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { LedgerService } from '../ledger/ledger.service';
import { UsageBatcher } from './usage-batcher';

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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.batcher = new UsageBatcher(
      (events) => this.ledger.applyUsage(events),
      config.USAGE_CONCURRENCY,
    );
  }

  onApplicationBootstrap(): void {
    // Parallelism is client-side only (the provisioned max_ack_pending bounds it across replicas).
    this.consumers.run(
      { ...Consumers.ledgerUsage, concurrency: this.config.USAGE_CONCURRENCY },
      (message) => this.handle(message),
    );
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
