import 'reflect-metadata';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createHttpApp } from '@meridian/platform-http';
import { buildInfo, createLogger, installProcessGuard } from '@meridian/platform-observability';
import { AppModule, SERVICE } from './app.module';
import { AdjustableClock } from './clock/adjustable-clock';
import { TestClockModule } from './clock/test-clock.module';
import { configSchema } from './config/config';

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const testClock = config.TEST_CLOCK_CONTROL ? new AdjustableClock() : null;
  const root = AppModule.forRoot(config, logger, testClock ? { clock: testClock } : {});
  const app = await createHttpApp(testClock ? TestClockModule.around(root, testClock) : root, {
    logger,
    accessLog: config.REQUEST_LOGS,
    // billing.v1's server starts at init, after the usage consumers may have: asked first.
    initListens: [{ setting: 'GRPC_PORT', port: config.GRPC_PORT, host: config.HTTP_HOST }],
  });
  if (testClock) logger.warn('TEST_CLOCK_CONTROL: the clock can be moved by the operator API');
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, ...buildInfo() }, 'billing-ledger listening');
  installProcessGuard(logger);
}

void main();
