import { COMPAT_BREAKER } from './protection/circuit-breaker';
import {
  BalanceStateChangedSchema,
  deliveryJobsConsumer,
  KvBuckets,
  WebhookStatusEntrySchema,
  type ConsumerDeclaration,
} from '@meridian/contracts';
import {
  JetStreamConsumers,
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  type ConsumerRunner,
  type KvMirror,
} from '@meridian/platform-messaging';
import { DbJobGate, RetentionPruner } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import { DAY, type Clock } from '@meridian/time';
import { parseSecretsKey, SecretKeyRing } from '@meridian/platform-secrets';
import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AttemptsRepository } from './attempts/attempts.repository';
import { UsageOutbox } from './billing/usage-outbox';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { DeliveryEngine, HELD_RETURN_MS } from './jobs/delivery-engine';
import { deliveryJobsHandler } from './jobs/delivery-jobs.consumer';
import { HealthPublisher } from './jobs/health-publisher';
import { DeliveryMetrics } from './observability/delivery-metrics';
import { COMPAT_ENDPOINT_LIMITS, EndpointLimits } from './protection/endpoint-limits';
import type { Resolver } from './sending/guarded-lookup';
import { HttpSender } from './sending/http-sender';

export const WORKER_OPTIONS = Symbol('WORKER_OPTIONS');

/** What a test (or the bench) may replace: the clock, the resolver, the consumer's settings. */
export interface WorkerOptions {
  clock: Clock;
  resolver?: Resolver;
  consumer?: ConsumerDeclaration;
}

/**
 * Starts the worker at bootstrap: the two KV mirrors (webhook status + sealed secrets, balance
 * state), the delivery-jobs consumer once both hold their first snapshot, the usage outbox and
 * the attempt log's retention; stops them at shutdown (in-flight attempts finish, the last usage
 * is flushed).
 */
@Injectable()
export class DeliveryRuntime implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly engine: DeliveryEngine;
  readonly outbox: UsageOutbox;
  /** The attempt log's retention (ADR 0431 "Retention"). */
  readonly retention: RetentionPruner;
  readonly sender: HttpSender;
  readonly health: HealthPublisher;
  /** The accounts' balance states as this worker last saw them (billing-balance-state KV). */
  readonly balances: KvMirror<typeof BalanceStateChangedSchema>;
  private runner: ConsumerRunner | undefined;
  /** Both mirrors hold their first snapshot. */
  private readonly mirrorsLoaded: Promise<void>;
  private stopping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_OPTIONS) private readonly options: WorkerOptions,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly db: DataSource,
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly publisher: JetStreamPublisher,
    private readonly consumers: JetStreamConsumers,
    registry: Registry,
  ) {
    const statuses = consumers.mirror(KvBuckets.webhookStatus.name, WebhookStatusEntrySchema);
    const balances = consumers.mirror(KvBuckets.balanceState.name, BalanceStateChangedSchema);
    this.balances = balances;
    this.mirrorsLoaded = Promise.all([statuses.initialized, balances.initialized]).then(
      () => undefined,
    );
    const clock = options.clock;
    this.sender = new HttpSender({
      policy: { allowLoopback: config.ALLOW_LOOPBACK_TARGETS },
      ...(options.resolver ? { resolver: options.resolver } : {}),
    });
    const declaration = options.consumer ?? deliveryJobsConsumer(config.DELIVERY_PARTITION);
    this.health = new HealthPublisher(client, namespace);
    const metrics: DeliveryMetrics = new DeliveryMetrics(registry, {
      queueDepth: async () => {
        const jsm = await client.jetstreamManager();
        const info = await jsm.consumers.info(
          namespace.stream(declaration.stream),
          namespace.consumer(declaration.durable),
        );
        return info.num_pending + info.num_ack_pending;
      },
      oldestWaitingMs: () => this.engine.oldestHeldMs(),
    });
    const attempts = new AttemptsRepository(db);
    this.engine = new DeliveryEngine({
      clock,
      statusOf: (id) => statuses.get(id),
      balanceOf: (id) => balances.get(id),
      attempts,
      send: (url, headers, body) => this.sender.send(url, headers, body),
      limits: new EndpointLimits({
        ...COMPAT_ENDPOINT_LIMITS,
        inFlightPerAccount: config.ACCOUNT_MAX_IN_FLIGHT,
      }),
      secrets: new SecretKeyRing(
        parseSecretsKey(config.WEBHOOK_SECRETS_KEY),
        config.WEBHOOK_SECRETS_PREVIOUS_KEYS ?? [],
      ),
      publishHealth: (health) => this.health.publish(health),
      recheckMaxMs: config.DELIVERY_RECHECK_MAX_MS,
      // A predecessor's jobs are all back by then (README, "The deliveries go in order").
      startGraceMs: declaration.ackWaitMs + HELD_RETURN_MS,
      onAttempt: (outcome, errorClass, billed, durationMs) => {
        metrics.attempts.inc({ outcome, error_class: errorClass, billed: String(billed) });
        if (durationMs !== undefined)
          metrics.attemptDuration.observe({ outcome }, durationMs / 1_000);
      },
      onWait: (reason) => metrics.waits.inc({ reason }),
      onDropped: (reason) => metrics.dropped.inc({ reason }),
      onBreaker: (change, job, host) => {
        // One line per change of an endpoint's breaker (QA: none said 1,564 attempts were
        // skipped). The host only: an endpoint's path may carry the customer's own secret.
        const fields = { webhookId: job.webhookId, accountId: job.accountId, host };
        if (change === 'closed')
          logger.info(fields, 'circuit breaker closed: a probe to the endpoint succeeded');
        else
          logger.warn(
            fields,
            `circuit breaker ${change}: attempts to the endpoint are skipped (failed, not sent, not billed) for ${COMPAT_BREAKER.openMs / 60_000} minutes, then one probe`,
          );
      },
      onSecretRefused: (error, job) => {
        metrics.secretsRefused.inc({ reason: error.reason });
        // Error, not warn: deliveries of this webhook stop until its key is back in the ring.
        logger.error(
          {
            webhookId: job.webhookId,
            jobId: job.id,
            reason: error.reason,
            keyId: error.keyId,
            err: error.message,
          },
          'signing secret cannot be opened; the job is retried',
        );
      },
    });
    this.outbox = new UsageOutbox(db, publisher, {
      producerId: `delivery-worker-${hostname()}-${process.pid}-${Date.now()}`,
      intervalMs: config.USAGE_FLUSH_MS,
      version: config.USAGE_FLUSH_VERSION,
      now: () => clock.now(),
      onPublished: (outcome) => metrics.usageParts.inc({ outcome }),
      logger,
    });
    this.retention = new RetentionPruner((before, limit) => attempts.prune(before, limit), {
      name: 'attempt log',
      clock,
      retentionMs: config.ATTEMPT_LOG_RETENTION_DAYS * DAY,
      intervalMs: config.ATTEMPT_LOG_PRUNE_MS,
      onPruned: (count) => metrics.attemptsPruned.inc(count),
      logger,
      gate: DbJobGate.of(db),
    });
    this.declaration = declaration;
  }

  private readonly declaration: ConsumerDeclaration;

  onApplicationBootstrap(): void {
    // Jobs are taken once the webhook statuses and balance states are in memory: a job decided
    // before would find its webhook unknown and, older than the unknown-webhook wait (a backlog
    // met by a pod started while NATS was away), be dropped (ADR 0212 amendment).
    void this.mirrorsLoaded.then(() => {
      if (!this.stopping)
        this.runner = this.consumers.run(this.declaration, deliveryJobsHandler(this.engine));
    });
    this.outbox.start();
    this.retention.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.runner?.stop();
    await this.health.close();
    await this.retention.stop();
    await this.outbox.stop();
    await this.sender.close();
  }
}
