import 'reflect-metadata';
import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  Post,
  Query,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type Provider,
} from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DomainError } from '@meridian/errors';
import pino from 'pino';
import { z } from 'zod';
import { createHttpApp } from './create-http-app';
import { ApiRoute } from './openapi/api-route.decorator';
import { parseQuery } from './request-validation';
import { undeclaredQueryProviders } from './undeclared-query.interceptor';

const writes: unknown[] = [];
const listQuery = z.strictObject({ limit: z.coerce.number().int().optional() });

@Injectable()
class KeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    if (request.headers['authorization'] !== 'Bearer key') throw new UnauthorizedException();
    return true;
  }
}

@Controller('things')
@UseGuards(KeyGuard)
class ThingsController {
  @Get()
  @ApiRoute({ summary: 'list', query: listQuery, responses: {} })
  list(@Query() query: unknown) {
    return parseQuery(listQuery, query);
  }

  @Get('one')
  @ApiRoute({ summary: 'one', responses: {} })
  one() {
    return { one: true };
  }

  @Post()
  @ApiRoute({ summary: 'write', body: z.strictObject({ cu: z.number() }), responses: {} })
  write(@Body() body: unknown) {
    writes.push(body);
    return { written: true };
  }

  // Outside the API (no @ApiRoute), as /healthz, /metrics and /openapi.json.
  @Get('plain')
  plain() {
    return { plain: true };
  }
}

const appOf = async (providers: Provider[]) => {
  @Module({ controllers: [ThingsController], providers: [KeyGuard, ...providers] })
  class ThingsModule {}
  const app = await createHttpApp(ThingsModule, { logger: pino({ level: 'silent' }) });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
};

const ask = async (
  app: NestFastifyApplication,
  method: 'GET' | 'POST',
  url: string,
  key: string | undefined = 'key',
) => {
  const response = await app.inject({
    method,
    url,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { payload: '{"cu":1}' } : {}),
  });
  const body = response.json() as Record<string, unknown>;
  return `${response.statusCode} ${String(body['error'] ?? 'ok')} ${String(body['message'] ?? '')}`;
};

describe('UndeclaredQueryInterceptor: a route whose @ApiRoute declares no query takes none', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await appOf(undeclaredQueryProviders());
  });
  afterAll(() => app.close());
  beforeEach(() => writes.splice(0));

  it.each([
    ['GET', '/things/one?sort=1'],
    ['POST', '/things?x=1'],
  ] as const)('%s %s: 400 invalid_query naming the parameter', async (method, url) => {
    const name = new URLSearchParams(url.split('?')[1]).keys().next().value;
    expect(await ask(app, method, url)).toBe(
      `400 invalid_query query: unknown parameter "${name}"`,
    );
  });

  it('a write with an undeclared parameter writes nothing; without one it writes', async () => {
    await ask(app, 'POST', '/things?x=1');
    expect(writes).toEqual([]);
    expect(await ask(app, 'POST', '/things')).toMatch(/^201 ok/);
    expect(writes).toEqual([{ cu: 1 }]);
  });

  it('after the guards: without credentials still 401', async () => {
    expect(await ask(app, 'GET', '/things/one?sort=1', '')).toMatch(/^401 /);
  });

  it('a route with a query schema is left to its handler; one outside the API is left alone', async () => {
    expect(await ask(app, 'GET', '/things?limit=2')).toMatch(/^200 ok/);
    expect(await ask(app, 'GET', '/things?x=1')).toBe(
      '400 invalid_query query: unknown parameter "x"',
    );
    expect(await ask(app, 'GET', '/things/plain?x=1')).toMatch(/^200 ok/);
    expect(await ask(app, 'GET', '/things/one')).toMatch(/^200 ok/);
  });

  it("an app's own check gives its own answer", async () => {
    const own = await appOf(
      undeclaredQueryProviders(() => {
        throw new DomainError('own_code', 'invalid', 'own words');
      }),
    );
    try {
      expect(await ask(own, 'GET', '/things/one?sort=1')).toBe('400 own_code own words');
      expect(await ask(own, 'GET', '/things/plain?sort=1')).toMatch(/^200 ok/);
    } finally {
      await own.close();
    }
  });
});
