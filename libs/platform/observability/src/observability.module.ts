import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { HealthController } from './health.controller';
import { createMetricsRegistry, METRICS_TEXT, type MetricsText } from './metrics';
import { ReadinessRegistry } from './readiness';

export const LOGGER = Symbol('LOGGER');

/** Health (/healthz, /readyz), Prometheus (/metrics) and the pino logger, for every app. */
@Global()
@Module({})
export class ObservabilityModule {
  static forRoot(options: {
    service: string;
    logger: Logger;
    metricsText?: MetricsText;
  }): DynamicModule {
    return {
      module: ObservabilityModule,
      controllers: [HealthController],
      providers: [
        { provide: ReadinessRegistry, useValue: new ReadinessRegistry() },
        { provide: Registry, useValue: createMetricsRegistry(options.service) },
        { provide: LOGGER, useValue: options.logger },
        { provide: METRICS_TEXT, useValue: options.metricsText ?? null },
      ],
      exports: [ReadinessRegistry, Registry, LOGGER],
    };
  }
}
