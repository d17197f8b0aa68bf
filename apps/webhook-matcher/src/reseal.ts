import 'reflect-metadata';
import {
  loadConfigOrExit,
  natsSettingsOf,
  processClock,
  refuseClockOffsetInProduction,
} from '@meridian/platform-config';
import { createAppDataSource } from '@meridian/platform-db';
import { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { createLogger } from '@meridian/platform-observability';
import { parseSecretsKey, SecretKeyRing } from '@meridian/platform-secrets';
import { z } from 'zod';
import { configSchema, type AppConfig } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { StatusPublisher } from './status/status-publisher.service';
import { SecretReseal } from './webhooks/secret-reseal';
import { WebhooksRepository } from './webhooks/webhooks.repository';

/** The app's own settings; it serves nothing, so a Job needs no HTTP_PORT. */
const resealConfigSchema = z
  .object({ ...configSchema.shape, HTTP_PORT: configSchema.shape.HTTP_PORT.default(0) })
  .superRefine(refuseClockOffsetInProduction);

/** How long the command waits for NATS before it gives up (the table is not touched then). */
const NATS_WAIT_MS = 30_000;

/**
 * `reseal`: seals every signing secret again under WEBHOOK_SECRETS_KEY (ADR 0424), with
 * webhook-matcher's own configuration (its Secret and ConfigMap). Run it once every matcher
 * and delivery-worker holds the new key; prints one JSON line (the report); exits 0 when
 * nothing under another key is left in the table or the webhook-status bucket, else 1.
 */
async function main(): Promise<number> {
  const config: AppConfig = loadConfigOrExit(resealConfigSchema);
  const logger = createLogger('webhook-matcher-reseal', config.LOG_LEVEL);
  const ring = new SecretKeyRing(
    parseSecretsKey(config.WEBHOOK_SECRETS_KEY),
    config.WEBHOOK_SECRETS_PREVIOUS_KEYS,
  );
  const dataSource = createAppDataSource(dataSourceOptions(config.DATABASE_URL));
  const client = new NatsClient({ ...natsSettingsOf(config), name: 'webhook-matcher-reseal' });
  const namespace = new NatsNamespace(config.NATS_PREFIX);
  try {
    await dataSource.initialize();
    let timer: NodeJS.Timeout | undefined;
    const connected = await Promise.race([
      client.connection().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), NATS_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!connected) {
      process.stderr.write(`webhook-matcher reseal: NATS not reachable in ${NATS_WAIT_MS} ms\n`);
      return 1;
    }
    const clock = processClock(config);
    const publisher = new StatusPublisher(
      dataSource,
      new WebhooksRepository(),
      client,
      namespace,
      config,
      clock,
      logger,
    );
    const report = await new SecretReseal({
      dataSource,
      ring,
      clock,
      logger,
      publisher,
      client,
      namespace,
    }).run();
    process.stdout.write(`${JSON.stringify({ reseal: report })}\n`);
    return report.staleRows === 0 && report.staleEntries === 0 ? 0 : 1;
  } catch (error) {
    process.stderr.write(
      `webhook-matcher reseal failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    await client.close();
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

void main().then((code) => process.exit(code));
