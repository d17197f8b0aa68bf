import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  type InjectionToken,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import type { DependencyGate } from './dependency-gate';
import { JetStreamConsumers } from './jetstream-consumers';
import { JetStreamPublisher } from './jetstream-publisher';
import { NatsClient } from './nats-client';
import type { NatsConnectionSettings } from './nats-connect-options';
import { NatsNamespace } from './nats-namespace';
import { DEFAULT_NATS_PROBE, NatsProbe, type NatsProbeOptions } from './nats-probe';

export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

const silentLogger = { info: () => undefined, warn: () => undefined };

export interface MessagingOptions {
  /** NATS_URL and the NATS credential and TLS files: `natsSettingsOf(config)`. */
  connection: NatsConnectionSettings;
  /** NATS_PREFIX: prepended to every subject, stream, consumer and bucket name. */
  prefix: string;
  /** Connection name shown by the server (the app name). */
  name: string;
  /** How often `nats_connected` is probed (default every 5 s, a 2 s timeout). */
  probe?: NatsProbeOptions;
  /**
   * Providers of the dependencies the app's handlers need (`DbJobGate` for its Postgres), each
   * a `DependencyGate`: a handler failing because one is out of reach holds its message instead
   * of spending its delivery attempts (ConsumerRunner).
   */
  gates?: readonly InjectionToken[];
  /** Replaces every consumer's `backoffMs` (tests only). */
  consumerBackoffMs?: readonly number[];
}

/**
 * NATS for an app: inject `NatsClient` (the connection, opened in the background so app start
 * never waits for NATS), `JetStreamPublisher`, `JetStreamConsumers` (durable consumers and KV
 * mirrors), `NatsNamespace` and `NatsProbe`. NATS is never part of `/readyz` (ADR 0212 and its
 * amendment of 2026-11-30: a NATS blip would unready every replica of every app at once); it is
 * reported by `nats_connected` and `messaging_consumer_attached` on `/metrics` instead. Shutdown
 * order: consumers stop and drain (beforeApplicationShutdown), then the connection drains.
 */
@Global()
@Module({})
export class MessagingModule
  implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(
    private readonly client: NatsClient,
    private readonly consumers: JetStreamConsumers,
    private readonly probe: NatsProbe,
  ) {}

  static forRoot(options: MessagingOptions): DynamicModule {
    return {
      module: MessagingModule,
      providers: [
        { provide: MESSAGING_OPTIONS, useValue: options },
        { provide: NatsNamespace, useValue: new NatsNamespace(options.prefix) },
        {
          provide: NatsClient,
          inject: [{ token: LOGGER, optional: true }],
          useFactory: (logger?: Logger) =>
            new NatsClient(
              {
                url: options.connection.url,
                credsFile: options.connection.credsFile,
                nkeySeedFile: options.connection.nkeySeedFile,
                tls: options.connection.tls,
                name: options.name,
              },
              logger,
            ),
        },
        {
          provide: JetStreamPublisher,
          inject: [NatsClient, NatsNamespace],
          useFactory: (client: NatsClient, namespace: NatsNamespace) =>
            new JetStreamPublisher(client, namespace),
        },
        {
          provide: JetStreamConsumers,
          inject: [
            NatsClient,
            NatsNamespace,
            JetStreamPublisher,
            { token: LOGGER, optional: true },
            { token: Registry, optional: true },
            ...(options.gates ?? []),
          ],
          useFactory: (
            client: NatsClient,
            namespace: NatsNamespace,
            publisher: JetStreamPublisher,
            logger?: Logger,
            registry?: Registry,
            ...gates: DependencyGate[]
          ) =>
            new JetStreamConsumers(
              {
                client,
                namespace,
                publisher,
                logger,
                gates,
                backoffMs: options.consumerBackoffMs,
                deadLettered: registry
                  ? new Counter({
                      name: 'messaging_dead_lettered_total',
                      help: 'Messages a consumer gave up and parked on its dead-letter subject',
                      labelNames: ['consumer', 'reason', 'code'],
                      registers: [registry],
                    })
                  : undefined,
                redelivered: registry
                  ? new Counter({
                      name: 'messaging_redeliveries_total',
                      help: 'Messages a consumer put back to handle later (a scheduled wait, not a failure), by reason',
                      labelNames: ['consumer', 'reason'],
                      registers: [registry],
                    })
                  : undefined,
              },
              registry,
            ),
        },
        {
          provide: NatsProbe,
          inject: [
            NatsClient,
            { token: LOGGER, optional: true },
            { token: Registry, optional: true },
          ],
          // Without the app's registry (a test module) the gauge goes to one of its own.
          useFactory: (client: NatsClient, logger?: Logger, registry?: Registry) =>
            new NatsProbe(
              client,
              registry ?? new Registry(),
              logger ?? silentLogger,
              options.probe ?? DEFAULT_NATS_PROBE,
            ),
        },
      ],
      exports: [
        MESSAGING_OPTIONS,
        NatsNamespace,
        NatsClient,
        JetStreamPublisher,
        JetStreamConsumers,
        NatsProbe,
      ],
    };
  }

  onModuleInit(): void {
    this.client.start();
    this.probe.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.probe.stop();
    await this.consumers.stopAll();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
