import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from '../relay/relay.service';
import { WsGateway } from './ws-gateway';
import { UpstreamSubscribeError, type Subscriptions } from './subscription-hub';

/** A WsGateway on a server of its own, listening on a free port. */
async function listen(
  relay: RelayService,
  hub: Subscriptions,
  logger: pino.Logger,
  maxSubscriptionsPerConnection: number,
  maxSubscriptionsPerAccount: number,
): Promise<{ server: Server; port: number }> {
  const server = createServer();
  new WsGateway(relay, hub, new GatewayMetrics(new Registry()), logger, {
    maxSubscriptionsPerConnection,
    maxSubscriptionsPerAccount,
    maxBufferedBytes: 1024 * 1024,
    maxMessageBytes: 1024 * 1024,
    requestLogs: false,
  }).attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

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
    const authorized = { token: { accountId: 'acc' }, network: { key: 'eth-mainnet' } };
    const relay = {
      credentials: {
        onRevoked: () => undefined,
        onExhausted: () => undefined,
        wasRevoked: () => false,
        account: () => undefined,
      },
      authorize: async () => authorized,
      handle: async (_token: unknown, _network: unknown, text: string) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (text.includes('"fail"')) throw new Error('relay broke');
        return { body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' };
      },
    } as unknown as RelayService;
    ({ server, port } = await listen(
      relay,
      {} as Subscriptions,
      pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) }),
      1,
      1,
    ));
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

/**
 * The per-connection subscription limit with eth_subscribe frames sent without waiting for their
 * answers: a slot is held from the check on, before the first await, and given back when
 * subscribing fails.
 */
describe('WebSocket edge: per-connection subscription limit under frames sent at once', () => {
  const LIMIT = 3;
  let server: Server;
  let port: number;
  let failNext = 0;
  let held = 0;

  beforeAll(async () => {
    const authorized = { token: { accountId: 'acc' }, network: { key: 'eth-mainnet' } };
    const relay = {
      credentials: {
        onRevoked: () => undefined,
        onExhausted: () => undefined,
        wasRevoked: () => false,
        account: () => undefined,
      },
      authorize: async () => authorized,
      // The relay hands eth_subscribe to the session, as RelayService.handle does.
      handle: async (
        _token: unknown,
        _network: unknown,
        text: string,
        _transport: unknown,
        session: (call: unknown) => Promise<{ result?: unknown; error?: { message: string } }>,
      ) => {
        const call = JSON.parse(text) as { id: number; method: string; params: unknown[] };
        // An RpcCall as @meridian/jsonrpc parses it: its params' text too.
        const outcome = await session({ ...call, paramsRaw: JSON.stringify(call.params) });
        const error = outcome.error
          ? { code: outcome.error.message.startsWith('limit') ? -32005 : -32602 }
          : undefined;
        return {
          body: JSON.stringify(
            error
              ? { jsonrpc: '2.0', id: call.id, error }
              : { jsonrpc: '2.0', id: call.id, result: outcome.result },
          ),
        };
      },
    } as unknown as RelayService;
    let next = 0;
    const hub = {
      of: () => ({
        subscribe: async () => {
          // Subscribing takes a while, as an upstream subscription does.
          await new Promise((resolve) => setTimeout(resolve, 20));
          if (failNext > 0) {
            failNext--;
            throw new UpstreamSubscribeError('node refused');
          }
          held++;
          return `0x${(++next).toString(16)}`;
        },
        unsubscribe: () => {
          held--;
          return true;
        },
      }),
      reserve: () => true,
      release: () => undefined,
      close: () => undefined,
    } as unknown as Subscriptions;
    ({ server, port } = await listen(relay, hub, pino({ level: 'silent' }), LIMIT, 1_000));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const burst = async (ws: WebSocket, ids: number[]) => {
    const answers: { id: number; result?: unknown; error?: { code: number } }[] = [];
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data) => {
        answers.push(JSON.parse(data.toString()));
        if (answers.length === ids.length) resolve();
      }),
    );
    for (const id of ids)
      ws.send(
        JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params: ['newHeads'] }),
      );
    await done;
    ws.removeAllListeners('message');
    return answers;
  };

  it('105 frames at once: LIMIT subscribed, the rest refused; a failed subscribe gives its slot back', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/${'b'.repeat(32)}/`);
    await new Promise((resolve) => ws.once('open', resolve));
    const first = await burst(
      ws,
      Array.from({ length: 105 }, (_, i) => i + 1),
    );
    expect(first.filter((a) => typeof a.result === 'string')).toHaveLength(LIMIT);
    expect(first.filter((a) => a.error?.code === -32005)).toHaveLength(105 - LIMIT);
    expect(held).toBe(LIMIT);
    ws.close();
    for (let i = 0; i < 100 && held > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(held).toBe(0);

    const again = new WebSocket(`ws://127.0.0.1:${port}/${'b'.repeat(32)}/`);
    await new Promise((resolve) => again.once('open', resolve));
    failNext = 1;
    const withFailure = await burst(again, [1, 2, 3]);
    expect(withFailure.filter((a) => typeof a.result === 'string')).toHaveLength(LIMIT - 1);
    expect(withFailure.filter((a) => a.error?.code === -32602)).toHaveLength(1);
    // The failed one's slot is free again: one more fits, the next does not.
    const more = await burst(again, [4, 5]);
    expect(more.filter((a) => typeof a.result === 'string')).toHaveLength(1);
    expect(more.filter((a) => a.error?.code === -32005)).toHaveLength(1);
    again.close();
  });
});
