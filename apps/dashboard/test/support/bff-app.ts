import { randomBytes } from 'node:crypto';
import { createHttpApp } from '@meridian/platform-http';
import type { Clock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { AppModule } from '../../src/app.module';
import { configSchema } from '../../src/config/config';
import { OPERATOR_TOKEN } from './billing-ledger.process';

/**
 * The dashboard's environment in the int tests: its database, billing-ledger's API, the
 * webhooks API (nothing answers by default), a fresh secrets key and the operator's sign-in.
 * `over` adds or replaces variables (TRUST_PROXY, limits).
 */
export function bffEnv(options: {
  databaseUrl: string;
  billingApiUrl: string;
  webhooksApiUrl?: string;
  over?: Record<string, string>;
}): Record<string, string> {
  return {
    HTTP_PORT: '0',
    DATABASE_URL: options.databaseUrl,
    LOG_LEVEL: 'silent',
    BILLING_API_URL: options.billingApiUrl,
    WEBHOOKS_API_URL: options.webhooksApiUrl ?? 'http://127.0.0.1:1/api/v1',
    AUDIT_API_URL: 'http://127.0.0.1:1/v1',
    OPERATOR_TOKEN,
    DASHBOARD_SECRETS_KEY: randomBytes(32).toString('base64'),
    OPERATOR_EMAIL: 'ops@example.com',
    OPERATOR_PASSWORD: 'operator password 1',
    ...options.over,
  };
}

/**
 * The dashboard's BFF in this process, built as main.ts builds it (the config parsed, then given
 * to the HTTP edge), initialised and ready for `inject`; the caller closes it.
 */
export async function startBff(
  env: Record<string, string>,
  overrides: { clock?: Clock } = {},
): Promise<NestFastifyApplication> {
  const config = configSchema.parse(env);
  const logger = pino({ level: 'silent' });
  const app = await createHttpApp(AppModule.forRoot(config, logger, overrides), {
    logger,
    trustProxy: config.TRUST_PROXY,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
