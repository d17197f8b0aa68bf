import 'reflect-metadata';
import { Controller, Get, Module, Param, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DomainError } from '@meridian/errors';
import { ObservabilityModule } from '@meridian/platform-observability';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createHttpApp, type HttpAppOptions } from './create-http-app';

const SECRET = 'tok_SECRETSECRET0123456789';

@Controller('api/v1/things')
class ThingsController {
  @Get(':id')
  get(@Param('id') id: string) {
    return { id };
  }

  @Post(':id/roll')
  roll() {
    throw new DomainError('bad_roll', 'invalid', 'cannot roll');
  }

  @Get(':id/boom')
  boom() {
    throw new Error(`node https://node.example/v2/${SECRET} refused`);
  }
}

/** The value of the sample of `name` with exactly these labels, or undefined. */
async function sampleOf(
  registry: Pick<Registry, 'getSingleMetric'>,
  name: string,
  labels: Record<string, string>,
) {
  const metric = registry.getSingleMetric(name);
  const values = metric ? (await metric.get()).values : [];
  const same = (have: Record<string, unknown>) =>
    Object.keys(have).length === Object.keys(labels).length &&
    Object.entries(labels).every(([key, value]) => String(have[key]) === value);
  return values.find((sample) => same({ ...sample.labels }))?.value;
}

/** The edge's request metrics and access log, against a real createHttpApp (fastify inject). */
async function start(options: Partial<HttpAppOptions> = {}) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  @Module({
    imports: [ObservabilityModule.forRoot({ service: 'things', logger })],
    controllers: [ThingsController],
  })
  class ThingsModule {}
  const app: NestFastifyApplication = await createHttpApp(ThingsModule, { logger, ...options });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const registry = app.get(Registry);
  const metrics = () => registry.metrics();
  const accessLines = () => lines.filter((line) => line['msg'] === 'request');
  return { app, lines, metrics, registry, accessLines };
}

describe('request metrics and access log (createHttpApp)', () => {
  let edge: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    edge = await start();
  });
  afterAll(() => edge.app.close());

  const ask = (method: 'GET' | 'POST', url: string) =>
    edge.app.inject({ method, url, headers: { authorization: `Bearer ${SECRET}` } });

  it('labels a matched route by its template, an unknown path as unmatched, and the status code', async () => {
    expect((await ask('GET', `/api/v1/things/${SECRET}?apikey=${SECRET}`)).statusCode).toBe(200);
    expect((await ask('GET', `/api/v1/nothing/${SECRET}?apikey=${SECRET}`)).statusCode).toBe(404);
    expect((await ask('POST', '/api/v1/things/a1/roll')).statusCode).toBe(400);
    expect((await ask('GET', '/api/v1/things/a1/boom')).statusCode).toBe(500);
    // A 405 (the path is a route, not for this method) and a URL that does not decode
    // (answered past fastify's hooks): no route matched either.
    expect((await ask('POST', '/api/v1/things/a1')).statusCode).toBe(405);
    expect((await ask('GET', '/api/v1/things/%E0%A4%A')).statusCode).toBe(400);

    const text = await edge.metrics();
    const count = (labels: Record<string, string>) =>
      sampleOf(edge.registry, 'http_server_requests_total', labels);
    expect(await count({ method: 'GET', route: '/api/v1/things/:id', status: '200' })).toBe(1);
    expect(await count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(await count({ method: 'POST', route: '/api/v1/things/:id/roll', status: '400' })).toBe(
      1,
    );
    expect(await count({ method: 'GET', route: '/api/v1/things/:id/boom', status: '500' })).toBe(1);
    expect(await count({ method: 'POST', route: 'unmatched', status: '405' })).toBe(1);
    expect(await count({ method: 'GET', route: 'unmatched', status: '400' })).toBe(1);
    const ok = { method: 'GET', route: '/api/v1/things/:id', status: '200' };
    const duration = 'http_server_request_duration_seconds';
    const histogram = edge.registry.getSingleMetric(duration)!;
    const samples = (await histogram.get()).values;
    const of = (metricName: string, labels: Record<string, string | number>) =>
      samples.find(
        (sample) =>
          (sample as { metricName?: string }).metricName === metricName &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      )?.value;
    expect(of(`${duration}_count`, ok)).toBe(1);
    expect(of(`${duration}_bucket`, { ...ok, le: 10 })).toBe(1);
    expect(text).toContain(
      'http_server_requests_total{method="GET",route="unmatched",status="404"',
    );
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('apikey');
  });

  it('writes one access line per request: method, template, status, ms, request id; no path, query or header', async () => {
    edge.lines.length = 0;
    const answer = await ask('GET', `/api/v1/things/${SECRET}?apikey=${SECRET}`);
    const lines = edge.accessLines();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request',
        method: 'GET',
        route: '/api/v1/things/:id',
        status: 200,
        ms: expect.any(Number),
        request_id: answer.headers['x-request-id'],
      }),
    ]);
    expect(JSON.stringify(edge.lines)).not.toContain(SECRET);
    expect(JSON.stringify(edge.lines).toLowerCase()).not.toContain('authorization');
  });

  it('leaves out the probes: /healthz, /readyz, /metrics', async () => {
    edge.lines.length = 0;
    for (const url of ['/healthz', '/readyz', '/metrics'])
      expect((await edge.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect(edge.accessLines()).toEqual([]);
    expect(await edge.metrics()).not.toMatch(/route="\/(healthz|readyz|metrics)"/);
  });
});

describe('request metrics and access log switched off (the gateway)', () => {
  it('adds no series and no line', async () => {
    const edge = await start({ requestMetrics: false, accessLog: false });
    try {
      expect((await edge.app.inject({ method: 'GET', url: '/api/v1/things/a1' })).statusCode).toBe(
        200,
      );
      expect(await edge.metrics()).not.toContain('http_server_requests_total');
      expect(edge.accessLines()).toEqual([]);
    } finally {
      await edge.app.close();
    }
  });

  it('the access log alone (metrics on by default) can be turned off', async () => {
    const edge = await start({ accessLog: false });
    try {
      await edge.app.inject({ method: 'GET', url: '/api/v1/things/a1' });
      expect(await edge.metrics()).toContain('http_server_requests_total{method="GET"');
      expect(edge.accessLines()).toEqual([]);
    } finally {
      await edge.app.close();
    }
  });
});
