import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { logEmitterInitCode, startAnvil, type AnvilInstance } from '@meridian/testing';
import { CLOSE_SLOW_CONSUMER, slowConsumerReason } from '../src/websocket/ws-gateway';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

/**
 * The slow-consumer rule against a real gateway, anvil and real WebSocket clients (QA M1, L1).
 * M1: a client subscribed to newHeads asked for an eth_getLogs answer of 13.85 MB and, reading
 * it at 15 MB/s, was cut (1006) when a head arrived while the answer drained: answers counted
 * against WS_MAX_BUFFERED_BYTES. L1: a client paused on a logs subscription got part of a
 * transaction's logs, then 1006 with no reason. The limit here is 64 KiB and the answer about
 * 8 MB, so most of it waits in the gateway's buffer behind a paused client socket (the kernel's
 * buffers take a few MB) while a head arrives.
 */
const TOKEN = 'tok_ws_slow_consumer_0001';
const MAX = 64 * 1024;
const DEV_ACCOUNT = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const LOGS_PER_TX = 85;
/** A log of 24,576 zero bytes is about 49 KB of JSON; a transaction's logs about 4.2 MB. */
const BIG_LOGS = logEmitterInitCode(LOGS_PER_TX, 24_576);

type Message = {
  id?: number;
  result?: unknown;
  method?: string;
  params?: { subscription: string; result: unknown };
};

/** A client on the gateway, everything it read, and how it closed. */
async function client(gateway: RunningGateway) {
  const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const read: Message[] = [];
  const waiting = new Map<number, (m: Message) => void>();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Message;
    read.push(message);
    if (message.id !== undefined) waiting.get(message.id)?.(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const ask = (id: number, method: string, params: unknown[]) => {
    const answered = new Promise<Message>((resolve) => waiting.set(id, resolve));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answered;
  };
  const socket = (ws as unknown as { _socket: Socket })._socket;
  const notifications = () => read.filter((m) => m.method === 'eth_subscription');
  return { ws, read, closed, ask, socket, notifications };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('rpc-gateway WebSocket: the slow-consumer rule', () => {
  let anvil: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;
  const cuts = () => metricValue(gateway.url, 'rpc_gateway_ws_slow_clients_cut_total', {});
  const answered = () =>
    metricValue(gateway.url, 'rpc_gateway_requests_total', {
      transport: 'websocket',
      status: '200',
    });
  /** One transaction of big logs, sent to anvil itself; its block number. */
  const bigLogs = async () => {
    const sent = await rpc(anvil.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_sendTransactionSync',
      params: [{ from: DEV_ACCOUNT, data: BIG_LOGS, gas: '0x112a880' }],
    });
    const receipt = (sent.json as { result: { blockNumber: string; logs: unknown[] } }).result;
    expect(receipt.logs).toHaveLength(LOGS_PER_TX);
    return receipt.blockNumber;
  };

  beforeAll(async () => {
    [anvil, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-ws-slow', network: 'eth-mainnet', planId: 'pro' },
      }),
      WS_MAX_BUFFERED_BYTES: String(MAX),
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([anvil?.stop(), ns?.cleanup()]);
  });

  it('a subscribed client reading a big eth_getLogs answer at its own pace gets it, and the heads, uncut', async () => {
    const first = await bigLogs();
    const last = await bigLogs();
    const before = await cuts();
    const reader = await client(gateway);
    // A second client reading at once: when it has a head, the gateway has handed the reader
    // the same head (one fan-out), while the reader's answer is still queued.
    const witness = await client(gateway);
    expect(typeof (await reader.ask(1, 'eth_subscribe', ['newHeads'])).result).toBe('string');
    expect(typeof (await witness.ask(1, 'eth_subscribe', ['newHeads'])).result).toBe('string');
    const answeredBefore = await answered();
    reader.socket.pause();
    const logs = reader.ask(2, 'eth_getLogs', [{ fromBlock: first, toBlock: last }]);
    await until(async () => (await answered()) > answeredBefore);
    await rpc(anvil.url, { jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] });
    await until(() => witness.notifications().length > 0);
    expect(witness.notifications()).toHaveLength(1);
    // The reader reads again: the whole answer, the head, and the session goes on.
    reader.socket.resume();
    // (The old rule cut it here: 1006, the answer lost.)
    const outcome = await Promise.race([logs, reader.closed.then((closed) => ({ closed }))]);
    expect(outcome).not.toHaveProperty('closed');
    expect(((outcome as Message).result as unknown[]).length).toBe(2 * LOGS_PER_TX);
    await until(() => reader.notifications().length > 0);
    expect(reader.notifications()).toHaveLength(1);
    expect((await reader.ask(3, 'eth_chainId', [])).result).toBe('0x1');
    expect(reader.ws.readyState).toBe(WebSocket.OPEN);
    expect(await cuts()).toBe(before);
    reader.ws.close();
    witness.ws.close();
  }, 60_000);

  it('a client that stops reading its logs subscription is cut at the limit, told 1013 and why', async () => {
    const before = await cuts();
    const reader = await client(gateway);
    expect(typeof (await reader.ask(1, 'eth_subscribe', ['logs'])).result).toBe('string');
    reader.socket.pause();
    // About 4.2 MB of log notifications for a reader that reads nothing.
    await bigLogs();
    await until(async () => (await cuts()) > before);
    expect(await cuts()).toBe(before + 1);
    // It reads again before the close deadline: what was queued before the cut, then why.
    reader.socket.resume();
    expect(await reader.closed).toEqual({
      code: CLOSE_SLOW_CONSUMER,
      reason: slowConsumerReason(MAX),
    });
    expect(reader.notifications().length).toBeGreaterThan(0);
    expect(reader.notifications().length).toBeLessThan(LOGS_PER_TX);
  }, 60_000);
});
