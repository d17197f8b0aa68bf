import { createServer, type Server } from 'node:http';
import { currentRequestId } from '@meridian/platform-observability';
import pino from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from '../relay/relay.service';
import { WsGateway } from './ws-gateway';
import type { Subscriptions } from './subscription-hub';

/**
 * The WebSocket edge enters its session's request id (the upgrade's X-Request-Id) for the work
 * of every message, so the process guard can name it (ADR 0210).
 */
describe('WebSocket edge: request id of the work a message causes', () => {
  let server: Server;
  let port: number;
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    server = createServer();
    const authorized = { token: { accountId: 'acc' }, network: { key: 'eth-mainnet' } };
    const relay = {
      credentials: { onRevoked: () => undefined, wasRevoked: () => false },
      authorize: async () => authorized,
      handle: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(currentRequestId());
        return { body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' };
      },
    } as unknown as RelayService;
    const gateway = new WsGateway(
      relay,
      {} as Subscriptions,
      new GatewayMetrics(new Registry()),
      pino({ level: 'silent' }),
      {
        maxSubscriptionsPerConnection: 1,
        maxSubscriptionsPerAccount: 1,
        maxBufferedBytes: 1024 * 1024,
        maxMessageBytes: 1024 * 1024,
        requestLogs: false,
      },
    );
    gateway.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("carries each session's id into the relay's work, message after message", async () => {
    const open = (requestId: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/${'a'.repeat(32)}/`, {
          headers: { 'x-request-id': requestId },
        });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const call = (ws: WebSocket) =>
      new Promise<void>((resolve) => {
        ws.once('message', () => resolve());
        ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
      });
    const [a, b] = await Promise.all([open('ws-a'), open('ws-b')]);
    await call(a);
    await call(b);
    await call(a);
    a.terminate();
    b.terminate();
    expect(seen).toEqual(['ws-a', 'ws-b', 'ws-a']);
  });
});
