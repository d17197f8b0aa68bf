import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  Inject,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { LOGGER, ReadinessRegistry } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { JetStreamConsumers } from './jetstream-consumers';
import { JetStreamPublisher } from './jetstream-publisher';
import { NatsClient } from './nats-client';
import type { NatsConnectionSettings } from './nats-connect-options';
import { NatsNamespace } from './nats-namespace';

export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

export interface MessagingOptions {
  /** NATS_URL and the NATS credential and TLS files: `natsSettingsOf(config)`. */
  connection: NatsConnectionSettings;
  /** NATS_PREFIX: prepended to every subject, stream, consumer and bucket name. */
  prefix: string;
  /** Connection name shown by the server (the app name). */
  name: string;
  /**
   * Whether NATS (the connection, and the app's consumers and KV mirrors) is part of `/readyz`;
   * default true. False only for an app that serves without NATS and reports it otherwise
   * (rpc-gateway: usage waits in memory, ADR 0212).
   */
  readiness?: boolean;
}

/**
 * NATS for an app: inject `NatsClient` (the connection, opened in the background so app start
 * never waits for NATS), `JetStreamPublisher`, `JetStreamConsumers` (durable consumers and KV
 * mirrors) and `NatsNamespace`. Registers the `nats` readiness check (unless `readiness` is
 * false). Shutdown order: consumers stop and drain (beforeApplicationShutdown), then the
 * connection drains.
 */
@Global()
@Module({})
export class MessagingModule
  implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(
    private readonly client: NatsClient,
    private readonly consumers: JetStreamConsumers,
    private readonly readiness: ReadinessRegistry,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
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
            ReadinessRegistry,
            { token: LOGGER, optional: true },
            { token: Registry, optional: true },
          ],
          useFactory: (
            client: NatsClient,
            namespace: NatsNamespace,
            publisher: JetStreamPublisher,
            readiness: ReadinessRegistry,
            logger?: Logger,
            registry?: Registry,
          ) =>
            new JetStreamConsumers(
              {
                client,
                namespace,
                publisher,
                logger,
                deadLettered: registry
                  ? new Counter({
                      name: 'messaging_dead_lettered_total',
                      help: 'Messages a consumer gave up and parked on its dead-letter subject',
                      labelNames: ['consumer', 'reason', 'code'],
                      registers: [registry],
                    })
                  : undefined,
              },
              options.readiness === false ? undefined : readiness,
            ),
        },
      ],
      exports: [
        MESSAGING_OPTIONS,
        NatsNamespace,
        NatsClient,
        JetStreamPublisher,
        JetStreamConsumers,
      ],
    };
  }

  onModuleInit(): void {
    if (this.options.readiness !== false)
      this.readiness.register('nats', () => this.client.check());
    this.client.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumers.stopAll();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
