import { createServer, request, Agent, type Server } from 'node:http';
import { currentRequestId } from '@meridian/platform-observability';
import pino from 'pino';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { RequestLog } from '../observability/request-log';
import { attachHotPath } from './relay.route';
import type { RelayService } from './relay.service';

/**
 * The relay route enters the request id once per request (process guard, ADR 0210): the
 * relay's work sees it, from a body that arrives in parts, request after request on one
 * keep-alive connection.
 */
describe('relay route: request id of the work it causes', () => {
  let server: Server;
  let port: number;
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    server = createServer();
    const relay = {
      handleHttp: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(currentRequestId());
        return { body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' };
      },
    } as unknown as RelayService;
    const logger = pino({ level: 'silent' });
    attachHotPath(
      server,
      relay,
      new GatewayMetrics(new Registry()),
      new RequestLog(logger, false),
      logger,
      { bodyLimitBytes: 1024 },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('sees each request id in the relay, body in parts, over one connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (requestId: string) =>
      new Promise<number>((resolve, reject) => {
        const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/${'a'.repeat(32)}/`,
            agent,
            headers: { 'x-request-id': requestId, 'content-length': body.length },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 10));
        setTimeout(() => req.end(body.slice(10)), 10);
      });
    expect(await post('relay-1')).toBe(200);
    expect(await post('relay-2')).toBe(200);
    agent.destroy();
    expect(seen).toEqual(['relay-1', 'relay-2']);
  });
});
