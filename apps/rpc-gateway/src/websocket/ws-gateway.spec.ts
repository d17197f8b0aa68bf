import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from '../relay/relay.service';
import { WsGateway } from './ws-gateway';
import type { Subscriptions } from './subscription-hub';

/**
 * The WebSocket edge names the session whose message failed by its id (the upgrade's
 * X-Request-Id): it catches each message's failure itself (ADR 0210: no AsyncLocalStorage in
 * the gateway) and the session goes on.
 */
describe("WebSocket edge: a message's failure named by its session", () => {
  let server: Server;
  let port: number;
  const logged: Array<{ connection_id?: string; msg?: string; err?: { message?: string } }> = [];

  beforeAll(async () => {
    server = createServer();
    const authorized = { token: { accountId: 'acc' }, network: { key: 'eth-mainnet' } };
    const relay = {
      credentials: { onRevoked: () => undefined, wasRevoked: () => false },
      authorize: async () => authorized,
      handle: async (_token: unknown, _network: unknown, text: string) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (text.includes('"fail"')) throw new Error('relay broke');
        return { body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' };
      },
    } as unknown as RelayService;
    const gateway = new WsGateway(
      relay,
      {} as Subscriptions,
      new GatewayMetrics(new Registry()),
      pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) }),
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

  it("logs each failed message with its session's id, and the session answers the next one", async () => {
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
    const fail = (ws: WebSocket) => ws.send('{"jsonrpc":"2.0","id":2,"method":"fail","params":[]}');
    const [a, b] = await Promise.all([open('ws-a'), open('ws-b')]);
    fail(a);
    fail(b);
    await call(a);
    await call(b);
    for (let i = 0; i < 100 && logged.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    a.terminate();
    b.terminate();
    expect(
      logged
        .map((l) => [l.connection_id, l.msg, l.err?.message])
        .sort(([x], [y]) => String(x).localeCompare(String(y))),
    ).toEqual([
      ['ws-a', 'ws message failed', 'relay broke'],
      ['ws-b', 'ws message failed', 'relay broke'],
    ]);
  });
});
