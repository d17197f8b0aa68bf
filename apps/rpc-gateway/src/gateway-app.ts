import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '@meridian/platform-http';
import type { Logger } from 'pino';
import { AppModule, type AppModuleOverrides } from './app.module';
import type { AppConfig } from './config/config';
import { GatewayRuntime } from './gateway.runtime';

export interface GatewayApp {
  app: NestFastifyApplication;
  runtime: GatewayRuntime;
}

/** The gateway as a Nest app (not listening yet); main.ts and in-process tests share it. */
export async function createGatewayApp(
  config: AppConfig,
  logger: Logger,
  overrides: AppModuleOverrides = {},
): Promise<GatewayApp> {
  const app = (await createHttpApp(AppModule.forRoot(config, logger, overrides), {
    logger,
    // The relay route is the hot path (ADR 0210): no per-request hook; it counts its own
    // requests (rpc_gateway_requests_total, rpc_gateway_request_duration_seconds).
    requestMetrics: false,
    accessLog: false,
    // BorApi's server starts at init: asked with HTTP_PORT, before the consumers start.
    initListens: config.GRPC_ENABLED
      ? [{ setting: 'GRPC_PORT', port: config.GRPC_PORT, host: config.HTTP_HOST }]
      : [],
  })) as NestFastifyApplication;
  return { app, runtime: app.get(GatewayRuntime) };
}
