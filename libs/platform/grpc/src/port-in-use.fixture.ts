// An app started as every app starts (createHttpApp, then listen on HTTP_PORT) with a gRPC server
// on GRPC_PORT started at init (as billing-ledger's and the gateway's): the port-in-use spec
// starts it on a taken port and reads its output. "init ran" marks that the app's init (where
// consumers start) was reached.
import 'reflect-metadata';
import { Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { createHttpApp } from '@meridian/platform-http';
import pino from 'pino';
import { startGrpcServer } from './grpc-server';

@Injectable()
class GrpcAtInit implements OnApplicationBootstrap {
  async onApplicationBootstrap(): Promise<void> {
    process.stdout.write(`${JSON.stringify({ msg: 'init ran' })}\n`);
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: Number(process.env['GRPC_PORT']),
      services: [],
      reflection: false,
    });
    await server.close(0);
  }
}

@Module({ providers: [GrpcAtInit] })
class FixtureModule {}

async function main(): Promise<void> {
  const logger = pino({ base: { service: 'port-in-use-fixture' } });
  // INIT_LISTENS=true: the app names its gRPC port to createHttpApp, as billing-ledger does.
  const grpcPort = Number(process.env['GRPC_PORT']);
  const app = await createHttpApp(FixtureModule, {
    logger,
    initListens:
      process.env['INIT_LISTENS'] === 'true'
        ? [{ setting: 'GRPC_PORT', port: grpcPort, host: '127.0.0.1' }]
        : [],
  });
  await app.listen(Number(process.env['HTTP_PORT']), '127.0.0.1');
  logger.info('listening');
  await app.close();
}

void main();
