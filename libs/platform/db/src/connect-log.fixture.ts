import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ObservabilityModule, ReadinessRegistry } from '@meridian/platform-observability';
import pino from 'pino';
import { DbModule } from './db.module';

/**
 * An app whose DATABASE_URL is wrong (QA: 47 "Driver not Connected" warnings, never the cause)
 * says why in its log: the driver's message and code, once per cause however often /readyz
 * retries, and never the password.
 */
export async function appWithDatabase(url: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  @Module({
    imports: [
      ObservabilityModule.forRoot({ service: 'things', logger }),
      DbModule.forApp({ url, schema: 'things', entities: [], migrations: [] }),
    ],
  })
  class ThingsModule {}
  const app = await NestFactory.createApplicationContext(ThingsModule, { logger: false });
  await app.init();
  return { app, lines, readiness: app.get(ReadinessRegistry) };
}
