import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  JetStreamConsumers,
  JetStreamPublisher,
  type ConsumerRunner,
} from '@meridian/platform-messaging';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { DeliveryJobPublisher } from '../delivery-jobs/delivery-job.publisher';
import { EventsBudget } from '../throttling/events-budget';
import { servedWebhookNetworks } from '../webhooks/networks';
import { DeliveryRoutes } from '../delivery-jobs/delivery-routes';
import { ChangePoller, chainBlocksConsumer, chainBlocksHandler } from './chain-blocks.consumer';
import { MatchingMetrics } from './matching-metrics';
import { MatchingEngine } from './matching.engine';
import { MatchingRepository } from './matching.repository';

/**
 * Runs matching in the app: builds the index from Postgres, then consumes CHAIN in order and
 * follows the change feed between blocks. The consumer starts only once the index is loaded,
 * so no block is matched against a partial index, and once the delivery routes' targets are
 * (`DeliveryRoutes.loaded`), so no job of a backlog goes on a route other than its host's.
 */
@Injectable()
export class MatchingService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly engine: MatchingEngine;
  private readonly poller: ChangePoller;
  private readonly partition;
  private readonly metrics: MatchingMetrics;
  private readonly networks: readonly string[];
  private runner: ConsumerRunner | undefined;
  private starting: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly stopped: Promise<void>;
  private stop: () => void = () => undefined;

  constructor(
    private readonly dataSource: DataSource,
    publisher: JetStreamPublisher,
    private readonly consumers: JetStreamConsumers,
    @Inject(CLOCK) clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly routes: DeliveryRoutes,
    registry: Registry,
    // pino itself: Nest's Logger printed the structured fields as "[object Object]".
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.stopped = new Promise((resolve) => (this.stop = resolve));
    this.partition = config.MATCHER_PARTITION;
    this.networks = servedWebhookNetworks(config.NETWORKS);
    this.metrics = new MatchingMetrics(registry, clock, this.partition, () => !!this.runner?.ready);
    this.engine = new MatchingEngine(
      new MatchingRepository(dataSource, config.DROP_LOG_ROWS_PER_BLOCK),
      new DeliveryJobPublisher(
        publisher,
        () => clock.now(),
        (webhookId, targetUrl) => routes.of(webhookId, targetUrl),
      ),
      new EventsBudget(),
      clock,
      this.partition,
      {
        info: (o, m) => this.logger.info({ context: 'matching', ...o }, m),
        warn: (o, m) => this.logger.warn({ context: 'matching', ...o }, m),
      },
      this.metrics,
    );
    this.poller = new ChangePoller(this.engine, DbJobGate.of(dataSource), {
      info: (o, m) => this.logger.info({ context: 'matching', ...o }, m),
      warn: (o, m) => this.logger.warn({ context: 'matching', ...o }, m),
    });
  }

  /** Loads in the background: the management API serves while a large index loads. */
  onApplicationBootstrap(): void {
    this.metrics.started(this.networks);
    this.starting = this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stop();
    await this.starting;
    await this.poller.stop();
  }

  private async start(): Promise<void> {
    // Not connected (a wrong DATABASE_URL, Postgres away at start): wait for the connection
    // quietly (DbJobGate; the connect log named the cause), not a failed load a second.
    await Promise.race([DbJobGate.of(this.dataSource).whenOpen(), this.stopped]);
    // Postgres may be briefly away at start: retry the load rather than run on a partial index.
    while (!this.stopping) {
      try {
        await this.engine.load();
        break;
      } catch (error) {
        // Postgres out of reach: reported to the gate (its one line), and the load waits for it.
        const gate = DbJobGate.of(this.dataSource);
        if (await gate.failed(error)) {
          await Promise.race([gate.whenOpen(), this.stopped]);
          continue;
        }
        this.logger.error({ context: 'matching', err: error }, 'match index load failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    if (this.stopping) return;
    // The routes' targets (the webhook-status mirror) load from NATS, which may be away at start:
    // a block matched before would put its jobs on route 0, not their hosts' (ADR 0212 amendment).
    await Promise.race([this.routes.loaded, this.stopped]);
    if (this.stopping) return;
    this.runner = this.consumers.run(
      chainBlocksConsumer(this.partition),
      chainBlocksHandler(this.engine),
    );
    this.poller.start();
  }
}
