import 'reflect-metadata';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createAppDataSource } from '@meridian/platform-db';
import { createLogger } from '@meridian/platform-observability';
import { configSchema } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { dashboardKeyRing } from './secrets/account-secrets';
import { ApiKeyReseal } from './secrets/api-key-reseal';

/** The dashboard's own settings; it serves nothing, so a Job needs no HTTP_PORT. */
const resealConfigSchema = configSchema.extend({
  HTTP_PORT: configSchema.shape.HTTP_PORT.default(0),
});

/**
 * `reseal`: seals every account's API key again under DASHBOARD_SECRETS_KEY (ADR 0603), with
 * the dashboard's own configuration (its Secret and ConfigMap). Run it once every dashboard pod
 * holds the new key; prints one JSON line (the report); exits 0 when no API key is left under
 * another key, else 1.
 */
async function main(): Promise<number> {
  const config = loadConfigOrExit(resealConfigSchema);
  const logger = createLogger('dashboard-reseal', config.LOG_LEVEL);
  const dataSource = createAppDataSource(dataSourceOptions(config.DATABASE_URL));
  try {
    await dataSource.initialize();
    const report = await new ApiKeyReseal({
      dataSource,
      ring: dashboardKeyRing(config),
      logger,
    }).run();
    process.stdout.write(`${JSON.stringify({ reseal: report })}\n`);
    return report.left === 0 ? 0 : 1;
  } catch (error) {
    process.stderr.write(
      `dashboard reseal failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

void main().then((code) => process.exit(code));
