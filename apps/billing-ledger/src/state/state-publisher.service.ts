import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import {
  Events,
  KvBuckets,
  revokedCredentialKey,
  type CredentialRevoked,
} from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { CLOCK } from '../clock/clock.token';
import { ChangeSignal } from '../ledger/change-signal';
import { OutboxRepository, type OutboxRow } from '../outbox/outbox.repository';
import { balanceStateOf } from './account-state';
import { StateRepository } from './state.repository';

const BATCH = 500;

/**
 * Gets committed changes out: the outbox (plan changes, revocations, cleared top-ups) in order,
 * then the latest balance state of every account whose version was not published yet, as an
 * event and into the balance-state KV bucket. Runs on every commit (ChangeSignal) and on the
 * periodic tick, so a change NATS could not take is retried; successive changes of one account
 * coalesce into its latest version.
 */
@Injectable()
export class StatePublisher implements OnModuleInit {
  private running: Promise<void> | undefined;
  private again = false;
  private readonly buckets = new Map<string, Promise<KV>>();

  constructor(
    private readonly publisher: JetStreamPublisher,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly outbox: OutboxRepository,
    private readonly states: StateRepository,
    private readonly signal: ChangeSignal,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.signal.onChange(() => void this.flush());
  }

  /** Publishes everything pending; concurrent calls share one run (and trigger one more). */
  flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.flushOutbox();
          await this.flushBalances();
        } catch (error) {
          this.logger.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'publishing changes failed; retrying on the next tick',
          );
          this.buckets.clear();
          break;
        }
      } while (this.again);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async flushOutbox(): Promise<void> {
    for (;;) {
      const rows = await this.outbox.pending(BATCH);
      if (rows.length === 0) return;
      const published: string[] = [];
      try {
        // In order: a consumer of account changes sees them as they happened.
        for (const row of rows) {
          await this.publishOutbox(row);
          published.push(row.id);
        }
      } finally {
        await this.outbox.markPublished(published, this.clock.now());
      }
      if (rows.length < BATCH) return;
    }
  }

  private async publishOutbox(row: OutboxRow): Promise<void> {
    switch (row.eventType) {
      case 'planChanged':
        await this.publisher.publish(Events.planChanged, row.payload as never);
        return;
      case 'topUpCleared':
        await this.publisher.publish(Events.topUpCleared, row.payload as never);
        return;
      case 'credentialRevoked': {
        const payload = row.payload as CredentialRevoked;
        const kv = await this.bucket(KvBuckets.revokedCredentials.name);
        await kv.put(
          revokedCredentialKey(payload.credentialType, payload.credentialHash),
          JSON.stringify(payload),
        );
        await this.publisher.publish(Events.credentialRevoked, payload);
        return;
      }
    }
  }

  private async flushBalances(): Promise<void> {
    for (;;) {
      const rows = await this.states.unpublished(BATCH);
      if (rows.length === 0) return;
      const kv = await this.bucket(KvBuckets.balanceState.name);
      const now = this.clock.now();
      await Promise.all(
        rows.map(async (row) => {
          const state = balanceStateOf(row, now);
          await kv.put(row.accountId, JSON.stringify(state));
          await this.publisher.publish(Events.balanceStateChanged, state);
        }),
      );
      await this.states.markPublished(rows);
      if (rows.length < BATCH) return;
    }
  }

  private bucket(name: string): Promise<KV> {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = new Kvm(this.client.jetstream()).open(this.namespace.bucket(name));
      bucket.catch(() => this.buckets.delete(name));
      this.buckets.set(name, bucket);
    }
    return bucket;
  }
}
