import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { buildInfo, ObservabilityModule } from '@meridian/platform-observability';
import { connect, type AddressInfo } from 'node:net';
import pino from 'pino';
import { createHttpApp } from './create-http-app';

/** One request written byte for byte (no client normalises its path); the status and body. */
function rawGet(
  port: number,
  path: string,
): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), body });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  });
}

/**
 * The internal routes every app serves (ObservabilityModule's HealthController) answer on their
 * exact path only: the router decodes `%6d` to `m`, and an Ingress's Exact rule closing
 * `/metrics` need not see the decoded path (QA: `curl --path-as-is …/%6detrics` served metrics).
 */
describe('internal routes answer on their exact raw path only', () => {
  let app: NestFastifyApplication;
  let port: number;

  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    @Module({ imports: [ObservabilityModule.forRoot({ service: 'things', logger })] })
    class ThingsModule {}
    app = await createHttpApp(ThingsModule, { logger });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  it.each(['/metrics', '/metrics?x=1', '/healthz', '/readyz'])('%s answers 200', async (path) => {
    const answer = await rawGet(port, path);
    expect(answer.status).toBe(200);
  });

  it('/metrics serves the registry', async () => {
    const answer = await rawGet(port, '/metrics');
    expect(answer.body).toContain('process_cpu_seconds_total');
    expect(answer.head).toContain('content-type: text/plain; version=0.0.4');
  });

  it('/healthz names the release and commit the process runs (meridian_build_info on /metrics)', async () => {
    const answer = await rawGet(port, '/healthz');
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok', ...buildInfo() });
    expect((await rawGet(port, '/metrics')).body).toMatch(/^meridian_build_info\{app="things",/m);
  });

  it('/readyz names them too, beside its checks', async () => {
    const answer = await rawGet(port, '/readyz');
    expect(JSON.parse(answer.body)).toEqual({ status: 'ready', checks: {}, ...buildInfo() });
  });

  it.each([
    '/%6detrics',
    '/%6D%65trics',
    '/metric%73',
    '/metrics%3Fx',
    '/%68ealthz',
    '/ready%7a',
    '/%2fmetrics',
  ])('%s is 404 not_found, no metrics', async (path) => {
    const answer = await rawGet(port, path);
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('process_cpu_seconds_total');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'not_found' });
  });
});
