import 'reflect-metadata';
import { resolve } from 'node:path';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createHttpApp } from '@meridian/platform-http';
import { buildInfo, createLogger, installProcessGuard } from '@meridian/platform-observability';
import { AppModule, SERVICE } from './app.module';
import { configSchema } from './config/config';
import { serveSpa } from './spa/serve-spa';

/** Where `vite build` (web/vite.config.ts) puts the page when WEB_DIST_DIR does not say. */
export const DEFAULT_WEB_DIST = resolve(__dirname, '../../../dist/apps/dashboard-web');

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const app = await createHttpApp(AppModule.forRoot(config, logger), {
    logger,
    trustProxy: config.TRUST_PROXY,
    accessLog: config.REQUEST_LOGS,
  });
  const webDir = config.WEB_DIST_DIR ?? DEFAULT_WEB_DIST;
  if (!(await serveSpa(app, webDir)))
    logger.warn({ dir: webDir }, 'the page is not built (vite build); serving the API only');
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, ...buildInfo() }, 'dashboard listening');
  installProcessGuard(logger);
}

void main();
