// A real HTTP app (createHttpApp, as every REST app starts) whose handlers fail after they
// answered, outside any await the framework could catch: the process guard tests in
// @meridian/platform-observability start it, break it, and read its log lines for the request id.
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { installProcessGuard } from '@meridian/platform-observability';
import pino from 'pino';
import { createHttpApp } from './create-http-app';

@Controller('boom')
class BoomController {
  @Post('reject')
  @HttpCode(200)
  async reject(@Body() body: unknown) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    void Promise.reject(new Error('rejected and not handled'));
    return { body };
  }

  @Post('throw')
  @HttpCode(200)
  throw() {
    setTimeout(() => {
      throw new Error('thrown outside any handler');
    }, 5);
    return { ok: true };
  }

  @Get('ok')
  ok() {
    return { ok: true };
  }
}

@Module({ controllers: [BoomController] })
class BoomModule {}

async function main() {
  const logger = pino({ base: { service: 'guarded-app-fixture' } });
  const app = await createHttpApp(BoomModule, { logger });
  await app.listen(0, '127.0.0.1');
  installProcessGuard(logger);
  const { port } = app.getHttpServer().address() as { port: number };
  process.stdout.write(`${JSON.stringify({ listening: port })}\n`);
}

void main();
