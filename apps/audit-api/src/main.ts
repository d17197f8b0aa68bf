import 'reflect-metadata';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createHttpApp } from '@meridian/platform-http';
import { buildInfo, createLogger, installProcessGuard } from '@meridian/platform-observability';
import { AppModule, SERVICE } from './app.module';
import { configSchema } from './config/config';

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const app = await createHttpApp(AppModule.forRoot(config, logger), {
    logger,
    accessLog: config.REQUEST_LOGS,
  });
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, ...buildInfo() }, 'audit-api listening');
  installProcessGuard(logger);
}

void main();
