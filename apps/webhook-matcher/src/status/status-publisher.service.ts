import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { KvBuckets, WebhookStatusEntrySchema, type WebhookStatusEntry } from '@meridian/contracts';
import { DbJobGate } from '@meridian/platform-db';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import { Kvm, type KV } from '@nats-io/kv';
import type { Clock } from '@meridian/time';
import { DataSource, type EntityManager } from 'typeorm';
import type { Logger } from 'pino';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { livePreviousSecretsOf } from '../webhooks/previous-secrets';
import {
  WebhooksRepository,
  type PublishedRow,
  type WebhookRow,
} from '../webhooks/webhooks.repository';
import { StatusHistoryRepository } from './status-history.repository';

type Reactivation = { at: Date; from: WebhookRow['status'] };

/**
 * Mirrors committed webhook changes into the `webhook-status` KV bucket (WebhookStatusEntry):
 * right after each commit, and again on a tick for any version that did not get there (NATS
 * down, a crash between commit and put), so the matcher and delivery-worker converge within
 * about a second. `published_version` on the row records what the bucket holds.
 */
@Injectable()
export class StatusPublisher implements OnApplicationBootstrap, OnApplicationShutdown {
  private bucket: Promise<KV> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Stateless (no dependencies): built here, so the reseal command's publisher has it too. */
  private readonly history = new StatusHistoryRepository();

  constructor(
    private readonly dataSource: DataSource,
    private readonly webhooks: WebhooksRepository,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.STATUS_REPUBLISH_MS > 0)
      this.timer = setInterval(() => void this.republish(), this.config.STATUS_REPUBLISH_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * Publishes the current rows of `ids` (after their transaction committed). Never throws. While
   * NATS is away it leaves them to the tick at once: the API's answer does not wait for a KV put
   * that can only time out (ADR 0212 amendment: the API serves without NATS).
   *
   * `m`: a caller inside a transaction passes its EntityManager, so the reads and the mark go
   * through the connection it holds. Never a second pooled connection while one is held: with
   * the pool's other connections held by requests waiting on the caller's lock, none would come
   * (QQ: parallel test sends starved the pool). A mark rolled back with the caller's transaction
   * only makes the tick put the entry again.
   */
  async publish(ids: readonly string[], m: EntityManager = this.dataSource.manager): Promise<void> {
    if (ids.length === 0) return;
    if (!this.client.connectedNow()) return;
    try {
      const rows = await this.webhooks.byIds(m, ids);
      await this.put(rows, m);
    } catch (error) {
      if (await DbJobGate.of(this.dataSource).failed(error)) return;
      this.logger.warn({ err: error, ids }, 'webhook status not published yet; the tick retries');
    }
  }

  /** Everything whose version the bucket does not hold yet. */
  async republish(): Promise<void> {
    if (this.running) return this.running;
    // Through the gate (DbJobGate): skipped quietly while Postgres is out of reach, and a pass
    // failing because it is closes the gate (its one line); the first tick after it opens
    // catches up.
    const gate = DbJobGate.of(this.dataSource);
    if (!gate.open) return;
    this.running = (async () => {
      try {
        await gate.run(async () => {
          for (;;) {
            const rows = await this.webhooks.unpublished(this.dataSource.manager, 200);
            if (rows.length === 0) return;
            await this.put(rows, this.dataSource.manager);
            if (rows.length < 200) return;
          }
        });
      } catch (error) {
        this.logger.warn({ err: error }, 'webhook status republish failed; next tick retries');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async put(rows: readonly PublishedRow[], m: EntityManager): Promise<void> {
    if (rows.length === 0) return;
    const kv = await this.kv();
    const reactivations = await this.history.lastReactivations(
      m,
      rows.filter((row) => row.version > row.published_version).map((row) => row.id),
    );
    for (const row of rows) {
      if (row.version <= row.published_version) continue;
      await kv.put(row.id, JSON.stringify(this.entryOf(row, reactivations.get(row.id))));
      await this.webhooks.markPublished(m, row);
    }
  }

  /**
   * `reactivated`: the webhook's latest return to active from a paused status (status history,
   * written in the transaction of the row's change, with the clock that stamps delivery jobs'
   * `createdAt`): delivery-worker drops the jobs queued before it (spec: paused webhooks' events
   * are not sent after the resume).
   */
  entryOf(row: WebhookRow, reactivated?: Reactivation): WebhookStatusEntry {
    // The latest previous secret beside the current one (what a worker of the first contract
    // reads), the others in `earlierSecrets` (ADR 0423 amendment).
    const [latest, ...earlier] = livePreviousSecretsOf(row, this.clock.now()).map((s) => ({
      sealed: s.sealed,
      expiresAt: s.expiresAt.toISOString(),
    }));
    const secrets: WebhookStatusEntry['secrets'] = [{ sealed: row.secret_sealed, expiresAt: null }];
    if (latest) secrets.push(latest);
    return WebhookStatusEntrySchema.parse({
      webhookId: row.id,
      accountId: row.account_id,
      status: row.status,
      version: row.version,
      targetUrl: row.target_url,
      secrets,
      // More than the contract's 8 only from rotations by pods of the release before the cap.
      ...(earlier.length > 0 ? { earlierSecrets: earlier.slice(0, 8) } : {}),
      updatedAt: row.updated_at.toISOString(),
      ...(row.resumed_at ? { resumedAt: row.resumed_at.toISOString() } : {}),
      ...(reactivated
        ? { reactivated: { at: reactivated.at.toISOString(), from: reactivated.from } }
        : {}),
    });
  }

  private kv(): Promise<KV> {
    if (!this.bucket) {
      const opening = (async () =>
        new Kvm(this.client.jetstream()).open(
          this.namespace.bucket(KvBuckets.webhookStatus.name),
        ))();
      opening.catch(() => (this.bucket = null));
      this.bucket = opening;
    }
    return this.bucket;
  }
}
