import 'reflect-metadata';
import { loadConfigOrExit } from '@meridian/platform-config';
import { createLogger } from '@meridian/platform-observability';
import { SERVICE } from './app.module';
import { configSchema } from './config/config';
import { createGatewayApp } from './gateway-app';

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const gateway = await createGatewayApp(config, logger);
  await gateway.app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, region: config.REGION }, 'rpc-gateway listening');
}

void main();
