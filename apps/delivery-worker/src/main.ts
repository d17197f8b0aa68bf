import 'reflect-metadata';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createHttpApp } from '@meridian/platform-http';
import {
  buildInfo,
  createLogger,
  disableRequestContext,
  installProcessGuard,
} from '@meridian/platform-observability';
import { AppModule, SERVICE } from './app.module';
import { configSchema } from './config/config';

async function main(): Promise<void> {
  // Its HTTP server only answers health and metrics; a request context there would put promise
  // hooks on every promise of the process for good (+~10 % CPU per attempt, bench/README).
  disableRequestContext();
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const app = await createHttpApp(AppModule.forRoot(config, logger), { logger });
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, ...buildInfo() }, 'delivery-worker listening');
  installProcessGuard(logger);
}

void main();
