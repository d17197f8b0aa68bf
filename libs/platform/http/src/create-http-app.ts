import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoNestLogger } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { DomainErrorFilter } from './domain-error.filter';
import { requestIdOf } from './request-id';

export interface HttpAppOptions {
  logger: Logger;
  /** Largest accepted request body; COMPAT: about 5 MiB. */
  bodyLimitBytes?: number;
}

/**
 * Every app's HTTP edge: fastify, JSON logs, X-Request-Id in and out, DomainError → HTTP.
 * Call `listen` on the result.
 */
export async function createHttpApp(
  module: Type<unknown> | DynamicModule,
  options: HttpAppOptions,
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimitBytes ?? 5 * 1024 * 1024,
    genReqId: requestIdOf,
    requestIdHeader: false,
  });
  adapter.getInstance().addHook('onRequest', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    logger: new PinoNestLogger(options.logger),
    bufferLogs: false,
  });
  app.useGlobalFilters(new DomainErrorFilter(options.logger));
  app.enableShutdownHooks();
  return app;
}

export type HttpApp = INestApplication;
