import { DynamicModule, Global, Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ReadinessRegistry } from '@meridian/platform-observability';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

export interface MessagingOptions {
  url: string;
  /** NATS_PREFIX: prepended to every subject, stream, consumer and bucket name. */
  prefix: string;
  /** Connection name shown by the server (the app name). */
  name: string;
}

/** The app's NATS connection (inject NATS_CONNECTION) and a `nats` readiness check. */
@Global()
@Module({})
export class MessagingModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly readiness: ReadinessRegistry,
  ) {}

  static forRoot(options: MessagingOptions): DynamicModule {
    return {
      module: MessagingModule,
      providers: [
        { provide: MESSAGING_OPTIONS, useValue: options },
        {
          provide: NATS_CONNECTION,
          useFactory: () =>
            connect({ servers: options.url, name: options.name, maxReconnectAttempts: -1, waitOnFirstConnect: true }),
        },
      ],
      exports: [NATS_CONNECTION, MESSAGING_OPTIONS],
    };
  }

  onModuleInit(): void {
    this.readiness.register('nats', async () => {
      if (this.connection.isClosed()) throw new Error('connection closed');
      await this.connection.flush();
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection.drain().catch(() => undefined);
  }
}
