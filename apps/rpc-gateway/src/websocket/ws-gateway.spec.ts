import type { Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from '../relay/relay.service';
import {
  CLOSE_SLOW_CONSUMER,
  slowConsumerReason,
  stalledReason,
  WS_ANSWER_STALL_MS,
  WS_SLOW_CLIENT_CLOSE_MS,
  WsGateway,
  type WsOptions,
} from './ws-gateway';
import { parseRequest, serializeRefusal, jsonRpcErrorOf } from '@meridian/jsonrpc';
import type { DomainError } from '@meridian/errors';
import {
  UpstreamSubscribeError,
  type SubscriberSink,
  type Subscriptions,
} from './subscription-hub';

/** A WsGateway on a server of its own, listening on a free port. */
async function listen(
  relay: RelayService,
  hub: Subscriptions,
  logger: pino.Logger,
  maxSubscriptionsPerConnection: number,
  maxSubscriptionsPerAccount: number,
  caps: Partial<
    Pick<
      WsOptions,
      | 'maxCallsInFlightPerConnection'
      | 'maxConnectionsPerToken'
      | 'maxBufferedBytes'
      | 'after'
      | 'maxConnectionsPerAccount'
      | 'maxCallsInFlightPerAccount'
      | 'maxUnreadBytesPerAccount'
    >
  > = {},
): Promise<{ server: Server; port: number; gateway: WsGateway; metrics: GatewayMetrics }> {
  const server = createServer();
  const metrics = new GatewayMetrics(new Registry());
  const gateway = new WsGateway(relay, hub, metrics, logger, {
    maxSubscriptionsPerConnection,
    maxSubscriptionsPerAccount,
    maxBufferedBytes: caps.maxBufferedBytes ?? 1024 * 1024,
    maxMessageBytes: 1024 * 1024,
    maxCallsInFlightPerConnection: caps.maxCallsInFlightPerConnection ?? 1_000,
    maxConnectionsPerToken: caps.maxConnectionsPerToken ?? 1_000,
    ...(caps.after === undefined ? {} : { after: caps.after }),
    ...(caps.maxConnectionsPerAccount === undefined
      ? {}
      : { maxConnectionsPerAccount: caps.maxConnectionsPerAccount }),
    ...(caps.maxCallsInFlightPerAccount === undefined
      ? {}
      : { maxCallsInFlightPerAccount: caps.maxCallsInFlightPerAccount }),
    ...(caps.maxUnreadBytesPerAccount === undefined
      ? {}
      : { maxUnreadBytesPerAccount: caps.maxUnreadBytesPerAccount }),
  });
  gateway.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, gateway, metrics };
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

/**
 * Bounded work per connection and per token (ADR 0203 amendment, QA: one token's flood of
 * WebSocket messages kept the gateway relaying them for 89 s after its clients left): calls in
 * flight past the cap are answered -32005 at once under their ids, everything a connection
 * started is abandoned when it closes, a token's connections past the cap are refused 429, and
 * a stopping gateway cuts clients that do not answer its close frame.
 */
describe('WebSocket edge: bounded work per connection and per token', () => {
  const CAP = 4;
  const TOKEN = 'c'.repeat(32);
  let server: Server;
  let port: number;
  let gateway: WsGateway;
  /** The relay's calls waiting for an answer, each with the signal it was handed. */
  const waiting: { text: string; abandoned?: AbortSignal; answer: () => void }[] = [];
  let handled = 0;

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
      refusedMessage: (error: DomainError, text: string) => ({
        body: serializeRefusal(parseRequest(text, { maxBatchSize: 100 }), jsonRpcErrorOf(error)),
        logged: { calls: 0, billedCalls: 0, cu: 0 },
      }),
      handle: (
        _token: unknown,
        _network: unknown,
        text: string,
        _transport: unknown,
        _session: unknown,
        abandoned?: AbortSignal,
      ) =>
        new Promise((resolve) => {
          handled++;
          const id = (JSON.parse(text) as { id?: number }).id ?? 0;
          waiting.push({
            text,
            abandoned,
            answer: () => resolve({ body: `{"jsonrpc":"2.0","id":${id},"result":"0x1"}` }),
          });
        }),
    } as unknown as RelayService;
    ({ server, port, gateway } = await listen(
      relay,
      {} as Subscriptions,
      pino({ level: 'silent' }),
      1,
      1,
      {
        maxCallsInFlightPerConnection: CAP,
        maxConnectionsPerToken: 2,
      },
    ));
  });
  afterAll(async () => {
    await gateway.close(0);
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(() => {
    for (const w of waiting.splice(0)) w.answer();
    handled = 0;
  });

  const open = (token: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${token}/`);
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  const nextAnswers = (ws: WebSocket, n: number) =>
    new Promise<{ id: unknown; result?: unknown; error?: { code: number; message: string } }[]>(
      (resolve) => {
        const got: { id: unknown }[] = [];
        const on = (data: WebSocket.RawData) => {
          const parsed = JSON.parse(data.toString()) as { id: unknown } | { id: unknown }[];
          got.push(...(Array.isArray(parsed) ? parsed : [parsed]));
          if (got.length >= n) {
            ws.off('message', on);
            resolve(got as never);
          }
        };
        ws.on('message', on);
      },
    );
  const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId' });
  const settle = async (until: () => boolean) => {
    for (let i = 0; i < 200 && !until(); i++) await new Promise((r) => setTimeout(r, 5));
  };

  it('calls past the cap are answered -32005 at once under their ids; a batch counts its calls', async () => {
    const ws = await open(TOKEN);
    // A batch of 3 and one call: the cap of 4 is full.
    ws.send(`[${call(1)},${call(2)},${call(3)}]`);
    ws.send(call(4));
    await settle(() => waiting.length === 2);
    const refused = nextAnswers(ws, 3);
    ws.send(call(5));
    ws.send(`[${call(6)},${call(7)}]`);
    const answers = await refused;
    expect(answers.map((a) => [a.id, a.error?.code])).toEqual([
      [5, -32005],
      [6, -32005],
      [7, -32005],
    ]);
    expect(answers[0]!.error!.message).toBe(
      `limit exceeded: at most ${CAP} calls in flight per WebSocket connection; ` +
        'wait for answers before sending more',
    );
    expect(handled).toBe(2);
    // An answer frees its calls' slots: the next call is relayed.
    const freed = nextAnswers(ws, 1);
    waiting.splice(1, 1)[0]!.answer();
    expect((await freed)[0]!.id).toBe(4);
    ws.send(call(8));
    await settle(() => handled === 3);
    expect(handled).toBe(3);
    ws.terminate();
  });

  it('a message alone in flight runs however large its batch', async () => {
    const ws = await open(TOKEN);
    ws.send(`[${[1, 2, 3, 4, 5, 6].map(call).join(',')}]`);
    await settle(() => handled === 1);
    expect(handled).toBe(1);
    ws.terminate();
  });

  it('closing abandons what the connection started: the relay is told and the answers are not sent', async () => {
    const ws = await open(TOKEN);
    ws.send(call(1));
    ws.send(call(2));
    await settle(() => waiting.length === 2);
    expect(waiting.map((w) => w.abandoned?.aborted)).toEqual([false, false]);
    ws.terminate();
    await settle(() => waiting.every((w) => w.abandoned?.aborted === true));
    expect(waiting.map((w) => w.abandoned?.aborted)).toEqual([true, true]);
  });

  it("a token's connections past the cap are refused 429 with the JSON-RPC refusal; a closed one frees its slot", async () => {
    const mine = 'e'.repeat(32);
    const a = await open(mine);
    const b = await open(mine);
    const refused = await new Promise<{ status: number; body: string }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${mine}/`);
      ws.on('error', () => undefined);
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
    });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32005,
        message:
          'limit exceeded: at most 2 open WebSocket connections per access token on this ' +
          'gateway process',
      },
    });
    // Another token is not held back by this one.
    const other = await open('d'.repeat(32));
    a.terminate();
    // The slot comes back when the server sees the socket close.
    let again: WebSocket | undefined;
    for (let i = 0; i < 100 && again === undefined; i++)
      again = await open(mine).catch(async () => {
        await new Promise((r) => setTimeout(r, 10));
        return undefined;
      });
    expect(again).toBeDefined();
    for (const ws of [b, other, again!]) ws.terminate();
  });

  it('stopping cuts a client that never answers the close frame after the grace, and abandons its work', async () => {
    const ws = await open('f'.repeat(32));
    ws.send(call(1));
    await settle(() => waiting.length === 1);
    // A client that does not answer close frames: its socket reads nothing more.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    const started = Date.now();
    await gateway.close(100);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(waiting[0]!.abandoned?.aborted).toBe(true);
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await closed;
  });
});

/**
 * One account's budget across its tokens and connections in a process (ADR 0203 amendment "One
 * account's budget per process"): every token here belongs to the same account. The relay's
 * answers are held until the test releases them, with a body of the size it asks for.
 */
describe("WebSocket edge: one account's budget across its tokens and connections", () => {
  let server: Server;
  let port: number;
  let gateway: WsGateway;
  let metrics: GatewayMetrics;
  const waiting: { id: number; answer: (bytes?: number) => void }[] = [];
  let handled = 0;

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
      refusedMessage: (error: DomainError, text: string) => ({
        body: serializeRefusal(parseRequest(text, { maxBatchSize: 100 }), jsonRpcErrorOf(error)),
        logged: { calls: 0, billedCalls: 0, cu: 0 },
      }),
      handle: (_token: unknown, _network: unknown, text: string) =>
        new Promise((resolve) => {
          handled++;
          const id = (JSON.parse(text) as { id?: number }).id ?? 0;
          waiting.push({
            id,
            answer: (bytes = 0) =>
              resolve({ body: `{"jsonrpc":"2.0","id":${id},"result":"0x${'0'.repeat(bytes)}"}` }),
          });
        }),
    } as unknown as RelayService;
    ({ server, port, gateway, metrics } = await listen(
      relay,
      {} as Subscriptions,
      pino({ level: 'silent' }),
      1,
      1,
      {
        maxCallsInFlightPerConnection: 100,
        maxConnectionsPerToken: 10,
        maxConnectionsPerAccount: 3,
        maxCallsInFlightPerAccount: 3,
        maxUnreadBytesPerAccount: 12 * 1024 * 1024,
      },
    ));
  });
  afterAll(async () => {
    await gateway.close(0);
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(() => {
    for (const w of waiting.splice(0)) w.answer();
    handled = 0;
  });

  const open = (token: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${token}/`, { maxPayload: 0 });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  const next = (ws: WebSocket) =>
    new Promise<{ id: number; result?: string; error?: { code: number; message: string } }>(
      (resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))),
    );
  const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getLogs' });
  const settle = async (until: () => boolean) => {
    for (let i = 0; i < 400 && !until(); i++) await new Promise((r) => setTimeout(r, 5));
  };
  const socketOf = (ws: WebSocket) => (ws as unknown as { _socket: Socket })._socket;

  it("refuses the account's connection past its cap whichever token it uses, 429 with the refusal", async () => {
    const held = [
      await open('g'.repeat(32)),
      await open('g'.repeat(32)),
      await open('h'.repeat(32)),
    ];
    const refused = await new Promise<{ status: number; body: string }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${'i'.repeat(32)}/`);
      ws.on('error', () => undefined);
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
    });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32005,
        message:
          'limit exceeded: at most 3 open WebSocket connections per account on this gateway process',
      },
    });
    held[0]!.terminate();
    let again: WebSocket | undefined;
    for (let i = 0; i < 100 && again === undefined; i++)
      again = await open('i'.repeat(32)).catch(async () => {
        await new Promise((r) => setTimeout(r, 10));
        return undefined;
      });
    expect(again).toBeDefined();
    for (const ws of [...held.slice(1), again!]) ws.terminate();
  });

  it("answers a call past the account's calls in flight -32005 at once, whichever connection sent it", async () => {
    const a = await open('j'.repeat(32));
    const b = await open('k'.repeat(32));
    a.send(call(1));
    a.send(call(2));
    b.send(call(3));
    await settle(() => handled === 3);
    const refused = next(b);
    b.send(call(4));
    expect(await refused).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: {
        code: -32005,
        message:
          'limit exceeded: at most 3 calls in flight per account over WebSocket on this gateway ' +
          'process; wait for answers before sending more',
      },
    });
    expect(handled).toBe(3);
    // An answer written frees its slot for the account's other connection.
    const answered = next(a);
    waiting.shift()!.answer();
    expect((await answered).id).toBe(1);
    b.send(call(5));
    await settle(() => handled === 4);
    expect(handled).toBe(4);
    a.terminate();
    b.terminate();
  });

  it("cuts the account's connection holding the most unread answers 1013 and why; the other goes on", async () => {
    const a = await open('l'.repeat(32));
    const b = await open('m'.repeat(32));
    a.send(call(1));
    b.send(call(2));
    await settle(() => handled === 2);
    // Neither reads: 9 MB and 8 MB of answers stay queued (the kernel takes a few MB at most).
    socketOf(a).pause();
    socketOf(b).pause();
    const closedA = new Promise<{ code: number; reason: string }>((resolve) =>
      a.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const unread = async () => (await metrics.wsUnreadAnswerBytes.get()).values[0]?.value ?? 0;
    const reaches = async (bytes: number) => {
      for (let i = 0; i < 400 && (await unread()) < bytes; i++)
        await new Promise((r) => setTimeout(r, 5));
    };
    waiting.shift()!.answer(9 * 1024 * 1024);
    await reaches(9 * 1024 * 1024);
    const answeredB = next(b);
    // 17 MiB queued past the budget of 12: A, holding the most, is cut as B's answer is queued.
    waiting.shift()!.answer(8 * 1024 * 1024);
    await reaches(17 * 1024 * 1024);
    socketOf(a).resume();
    socketOf(b).resume();
    expect(await closedA).toEqual({
      code: 1013,
      reason: `slow consumer: account over ${12 * 1024 * 1024} bytes of answers unread`,
    });
    expect((await answeredB).result).toHaveLength(2 + 8 * 1024 * 1024);
    expect(b.readyState).toBe(WebSocket.OPEN);
    b.terminate();
  });
});

/**
 * The slow-consumer rule (QA M1, L1): what a client is behind on is the notifications (and other
 * messages it did not ask for) it has not read, not the answers to its own calls being written.
 * A client reading a large answer at its own pace while notifications arrive is not cut; one
 * that stops reading while notifications flow is cut past maxBufferedBytes with a close frame
 * (1013 and a reason), and terminated if the close does not complete by the deadline. The
 * client's socket is paused to stand for a slow reader; the deadline's timer is the test's own.
 */
describe('WebSocket edge: the slow-consumer rule', () => {
  const MAX = 64 * 1024;
  /** Far more than the kernel's socket buffers take, so most of it waits in the gateway's. */
  const BIG = 16 * 1024 * 1024;
  const TOKEN = 'd'.repeat(32);
  let server: Server;
  let port: number;
  let gateway: WsGateway;
  let metrics: GatewayMetrics;
  const sinks = new Map<string, SubscriberSink>();
  let bigAnswers = 0;
  /** The close deadlines the gateway set, fired by the test. */
  const deadlines: { ms: number; run: () => void; cancelled: boolean }[] = [];

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
      handle: async (
        _token: unknown,
        _network: unknown,
        text: string,
        _transport: unknown,
        session: (call: unknown) => Promise<{ result?: unknown }>,
      ) => {
        const call = JSON.parse(text) as { id: number; method: string; params: unknown[] };
        if (call.method === 'eth_subscribe') {
          const outcome = await session({ ...call, paramsRaw: JSON.stringify(call.params) });
          return { body: JSON.stringify({ jsonrpc: '2.0', id: call.id, result: outcome.result }) };
        }
        if (call.method === 'eth_getLogs') {
          bigAnswers++;
          return { body: `{"jsonrpc":"2.0","id":${call.id},"result":"${'a'.repeat(BIG)}"}` };
        }
        return { body: `{"jsonrpc":"2.0","id":${call.id},"result":"0x1"}` };
      },
    } as unknown as RelayService;
    let next = 0;
    const hub = {
      of: () => ({
        subscribe: async (_params: unknown, sink: SubscriberSink) => {
          const id = `0x${(++next).toString(16)}`;
          sinks.set(id, sink);
          return id;
        },
        unsubscribe: (id: string) => sinks.delete(id),
      }),
      reserve: () => true,
      release: () => undefined,
    } as unknown as Subscriptions;
    ({ server, port, gateway, metrics } = await listen(
      relay,
      hub,
      pino({ level: 'silent' }),
      10,
      10,
      {
        maxBufferedBytes: MAX,
        after: (ms, run) => {
          const deadline = { ms, run, cancelled: false };
          deadlines.push(deadline);
          return () => (deadline.cancelled = true);
        },
      },
    ));
  });
  afterAll(async () => {
    await gateway.close(0);
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    deadlines.length = 0;
    bigAnswers = 0;
  });

  type Message = { id?: number; result?: unknown; method?: string };
  /** An open client, everything it reads, and a newHeads subscription's sink. */
  const subscribed = async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/${TOKEN}/`);
    await new Promise((resolve) => ws.once('open', resolve));
    const read: Message[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const answered = new Promise<string>((resolve) => {
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Message;
        read.push(message);
        if (message.id === 1) resolve(message.result as string);
      });
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    const id = await answered;
    return { ws, read, closed, id, sink: sinks.get(id)! };
  };
  const socketOf = (ws: WebSocket) =>
    (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  const settle = async (until: () => boolean) => {
    for (let i = 0; i < 400 && !until(); i++) await new Promise((r) => setTimeout(r, 5));
  };
  const head = (n: number) =>
    JSON.stringify({ number: `0x${n.toString(16)}`, pad: 'h'.repeat(1000) });
  const closeDeadlines = () => deadlines.filter((d) => d.ms === WS_SLOW_CLIENT_CLOSE_MS);
  const cuts = async () => (await metrics.wsSlowClientsCut.get()).values[0]?.value ?? 0;

  it('a client reading a large answer at its own pace while notifications arrive is not cut', async () => {
    const before = await cuts();
    const { ws, read, sink, id } = await subscribed();
    // A reader slower than the gateway: nothing read while the answer is queued behind the
    // kernel's buffers and heads arrive.
    socketOf(ws).pause();
    ws.send('{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{}]}');
    await settle(() => bigAnswers === 1);
    await new Promise((r) => setTimeout(r, 20));
    const delivered = Array.from({ length: 20 }, (_, n) => sink.notify(id, head(n)));
    expect(delivered.every(Boolean)).toBe(true);
    socketOf(ws).resume();
    await settle(() => read.filter((m) => m.method === 'eth_subscription').length === 20);
    const answer = read.find((m) => m.id === 2);
    expect((answer?.result as string | undefined)?.length).toBe(BIG);
    expect(read.filter((m) => m.method === 'eth_subscription')).toHaveLength(20);
    // The session goes on: a call is answered, and nothing was cut or scheduled to be.
    ws.send('{"jsonrpc":"2.0","id":3,"method":"eth_chainId","params":[]}');
    await settle(() => read.some((m) => m.id === 3));
    expect(read.some((m) => m.id === 3)).toBe(true);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(await cuts()).toBe(before);
    expect(closeDeadlines()).toHaveLength(0);
    // Its answers were read: the stall check finds nothing waiting and lets it be.
    for (const d of deadlines.filter((d) => d.ms === WS_ANSWER_STALL_MS)) d.run();
    expect(closeDeadlines()).toHaveLength(0);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
  });

  it('a client that stops reading while notifications flow is cut past the limit with 1013 and why', async () => {
    const before = await cuts();
    const { ws, read, closed, sink, id } = await subscribed();
    socketOf(ws).pause();
    let sent = 0;
    while (sent < 100_000 && sink.notify(id, head(sent))) sent++;
    // Cut once the gateway held more than MAX unread: nothing more is queued or subscribed.
    expect(sent).toBeLessThan(100_000);
    expect(sink.notify(id, head(0))).toBe(false);
    expect(sinks.has(id)).toBe(false);
    expect(await cuts()).toBe(before + 1);
    expect(closeDeadlines()).toHaveLength(1);
    // It reads again within the deadline: everything queued before the cut, then the close.
    socketOf(ws).resume();
    expect(await closed).toEqual({ code: CLOSE_SLOW_CONSUMER, reason: slowConsumerReason(MAX) });
    expect(slowConsumerReason(MAX)).toBe(
      'slow consumer: more than 65536 bytes of notifications unread',
    );
    expect(read.filter((m) => m.method === 'eth_subscription')).toHaveLength(sent);
    // The handshake completed on the gateway's side too: the deadline is called off.
    await settle(() => closeDeadlines()[0]!.cancelled);
    expect(closeDeadlines()[0]!.cancelled).toBe(true);
  });

  it('a cut client that does not complete the close is terminated at the deadline', async () => {
    const { ws, closed, sink, id } = await subscribed();
    socketOf(ws).pause();
    for (let n = 0; n < 100_000 && sink.notify(id, head(n)); n++);
    expect(closeDeadlines()).toHaveLength(1);
    closeDeadlines()[0]!.run();
    // Terminated, not closed: the client reads the end of the socket, never a close frame.
    socketOf(ws).resume();
    expect((await closed).code).toBe(1006);
  });

  it('a client that reads none of its answers is cut once the stall time passes without progress', async () => {
    const before = await cuts();
    const { ws, read, closed } = await subscribed();
    socketOf(ws).pause();
    ws.send('{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{}]}');
    await settle(() => bigAnswers === 1);
    await settle(() => deadlines.some((d) => d.ms === WS_ANSWER_STALL_MS));
    const stall = deadlines.filter((d) => d.ms === WS_ANSWER_STALL_MS);
    expect(stall).toHaveLength(1);
    // Nothing read since the answer was queued: cut, with the stall's reason.
    stall[0]!.run();
    expect(await cuts()).toBe(before + 1);
    expect(closeDeadlines()).toHaveLength(1);
    socketOf(ws).resume();
    expect(await closed).toEqual({
      code: CLOSE_SLOW_CONSUMER,
      reason: stalledReason(WS_ANSWER_STALL_MS),
    });
    expect(stalledReason(WS_ANSWER_STALL_MS)).toBe(
      'slow consumer: nothing read for 30 s with answers waiting',
    );
    // What was queued before the cut is still delivered ahead of the close.
    expect((read.find((m) => m.id === 2)?.result as string | undefined)?.length).toBe(BIG);
  });
});
