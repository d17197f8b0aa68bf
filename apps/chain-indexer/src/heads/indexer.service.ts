import {
  Inject,
  Injectable,
  OnApplicationBootstrap,
  BeforeApplicationShutdown,
} from '@nestjs/common';
import { hostname } from 'node:os';
import { Streams } from '@meridian/contracts';
import { reorgWindowBlocks } from '@meridian/networks';
import { DbJobGate } from '@meridian/platform-db';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { LOGGER, urlOrigin } from '@meridian/platform-observability';
import { systemClock, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { NodeClient } from '../chain/node-client';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { ChainStateRepository } from '../cursors/chain-state.repository';
import { NetworkLease } from '../leases/network-lease';
import { IndexerMetrics } from '../metrics/indexer-metrics';
import { HeadWatcher } from './head-watcher';
import { NetworkFollower } from './network-follower';

export const CLOCK = Symbol('CLOCK');

/** Starts one follower per configured network at boot; stops them (and frees leases) at shutdown. */
@Injectable()
export class IndexerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly followers: NetworkFollower[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly registry: Registry,
    private readonly dataSource: DataSource,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly publisher: JetStreamPublisher,
  ) {}

  onApplicationBootstrap(): void {
    const metrics = new IndexerMetrics(this.registry);
    const repository = new ChainStateRepository(this.dataSource);
    const replica = this.config.REPLICA_ID || `${hostname()}:${process.pid}`;
    for (const network of this.config.NETWORKS) {
      const upstreams = this.config.UPSTREAMS.get(network)!;
      const follower = new NetworkFollower({
        network,
        node: new NodeClient(network, upstreams, {
          onReceiptsFallback: (url) => {
            metrics.receiptsFallback.inc({ network });
            this.logger.warn(
              { network, upstream: urlOrigin(url) },
              'node lacks eth_getBlockReceipts; receipts per transaction',
            );
          },
        }),
        watcher: new HeadWatcher(
          upstreams[0]!.wsUrl,
          {
            pollMs: this.config.POLL_INTERVAL_MS,
            safetyPollMs: this.config.SAFETY_POLL_MS,
            reconnectMs: this.config.WS_RECONNECT_MS,
          },
          {
            onConnected: (up) => {
              metrics.wsConnected.set({ network }, up ? 1 : 0);
              this.logger.info(
                { network },
                up ? 'newHeads subscribed' : 'newHeads socket down; polling',
              );
            },
          },
        ),
        lease: new NetworkLease(network, replica, this.config.LEASE_TTL_MS, this.clock, {
          client: this.client,
          namespace: this.namespace,
        }),
        repository,
        publish: (contract, payload) => this.publisher.publish(contract, payload),
        clock: this.clock,
        metrics,
        logger: this.logger,
        natsConnected: this.client.connection(),
        databaseConnected: DbJobGate.of(this.dataSource).whenOpen(),
        database: DbJobGate.of(this.dataSource),
        options: {
          windowBlocks: this.config.WINDOW_BLOCKS ?? reorgWindowBlocks(network),
          historyBlocks: this.config.HISTORY_BLOCKS,
          maxMessageBytes: Streams.CHAIN.maxMsgSize,
          backfillBlocksPerSecond: this.config.BACKFILL_BLOCKS_PER_SECOND,
          startBlocksBehind: this.config.START_BLOCKS_BEHIND,
          deepReorgPolicy: this.config.DEEP_REORG_POLICY,
          leaseCheckMs: Math.max(50, Math.floor(this.config.LEASE_TTL_MS / 3)),
          errorBackoffMs: this.config.POLL_INTERVAL_MS,
        },
      });
      this.followers.push(follower);
      follower.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.followers.map((f) => f.stop()));
  }
}

export const clockProvider = { provide: CLOCK, useValue: systemClock };
