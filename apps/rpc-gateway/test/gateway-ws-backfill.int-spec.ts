import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  startAnvil,
  startCuttableTcpRelay,
  type AnvilInstance,
  type CuttableTcpRelay,
} from '@meridian/testing';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { provisionNamespace, startGateway, type RunningGateway } from './gateway-harness';

const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;
const TOPIC = `0x${'cd'.repeat(32)}`;
/** Init code that emits one log with TOPIC (LOG1) and deploys nothing. */
const LOG_DEPLOY = `0x7f${'cd'.repeat(32)}60006000a160006000f3` as Hex;
const TOKEN = 'tok_ws_backfill_00001';
/** anvil's first dev account (KEY_0's). */
const ACCOUNT_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

/**
 * ADR 0203 amendment: the gateway is cut from its node (a TCP relay in between) while blocks with
 * logs are mined; once the node is reachable again, the hub re-subscribes and fills the gap.
 * Every block number and every log arrives exactly once, in order, under the same ids.
 */
describe('rpc-gateway WebSocket: a resubscribe fills the gap', () => {
  let node: AnvilInstance;
  let relay: CuttableTcpRelay;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [node, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    relay = await startCuttableTcpRelay(node.port);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [`http://127.0.0.1:${relay.port}`] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-ws-backfill', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await relay?.close();
    await Promise.all([node?.stop(), ns?.cleanup()]);
  });

  const wallet = () =>
    createWalletClient({
      account: privateKeyToAccount(KEY_0),
      transport: http(node.url),
      chain: {
        id: 1,
        name: 'e',
        nativeCurrency: { name: 'E', symbol: 'E', decimals: 18 },
        rpcUrls: { default: { http: [node.url] } },
      },
    });
  const rpc = async (method: string, params: unknown[] = []) => {
    const response = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await response.json()) as { result: unknown }).result;
  };
  const headNumber = async () => Number(await rpc('eth_blockNumber'));
  /** A block with one log (anvil mines a block per transaction); its number. */
  const mineLog = async () => {
    const hash = await wallet().sendTransaction({ data: LOG_DEPLOY });
    for (;;) {
      const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as {
        blockNumber: string;
      } | null;
      if (receipt !== null) return Number(receipt.blockNumber);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const until = async (done: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };

  it('delivers every header and every log mined while the node was unreachable, once each', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((r) => ws.once('open', r));
    const ids: Record<number, string> = {};
    const heads: number[] = [];
    const logs: Array<{ block: number; index: number; removed: boolean; sub: string }> = [];
    let closed: { code: number; reason: string } | undefined;
    ws.on('close', (code, reason) => (closed = { code, reason: reason.toString() }));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.method !== 'eth_subscription') {
        ids[m.id] = m.result;
        return;
      }
      const { subscription, result } = m.params;
      if (subscription === ids[1]) heads.push(Number(result.number));
      else
        logs.push({
          block: Number(result.blockNumber),
          index: Number(result.logIndex),
          removed: result.removed === true,
          sub: subscription,
        });
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'eth_subscribe',
        params: ['logs', { topics: [TOPIC] }],
      }),
    );
    await until(() => ids[1] !== undefined && ids[2] !== undefined, 5_000);
    expect(typeof ids[1]).toBe('string');
    expect(typeof ids[2]).toBe('string');

    const logBlocks: number[] = [];
    const start = await headNumber();
    logBlocks.push(await mineLog());
    await until(() => logs.length === 1, 5_000);
    expect(logs).toHaveLength(1);

    // The gateway loses its node; blocks with and without logs are mined meanwhile.
    await relay.cut();
    for (let i = 0; i < 3; i++) {
      logBlocks.push(await mineLog());
      await rpc('evm_mine');
    }
    await relay.restore();

    // Back: the next blocks arrive after the gap is filled.
    await until(() => heads.includes(logBlocks[logBlocks.length - 1]! + 1), 15_000);
    logBlocks.push(await mineLog());
    const last = await headNumber();
    await until(() => heads.includes(last) && logs.some((l) => l.block === last), 15_000);
    await new Promise((r) => setTimeout(r, 300));
    ws.close();

    expect(closed === undefined || closed.code === 1005 || closed.code === 1000).toBe(true);
    const expected = Array.from({ length: last - start }, (_, i) => start + 1 + i);
    expect(heads).toEqual(expected);
    expect(logs.map((l) => l.block)).toEqual(logBlocks);
    expect(logs.every((l) => !l.removed && l.sub === ids[2])).toBe(true);
  }, 60_000);

  /**
   * QA MM: logs T1 (block n) and T2 (block n + 2) delivered; the gateway is cut from its node;
   * anvil_reorg(3) replaces n..n + 2 with T1 in n + 1 and T2 gone; the node is back. The client
   * gets both old logs with removed: true, then T1's log in its new block, nothing else, nothing
   * twice. The old code withdrew T2 only and never sent T1's new log.
   */
  it('a reorg in the gap under two delivered logs: both withdrawn, the moved one sent once', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((r) => ws.once('open', r));
    const ids: Record<number, string> = {};
    const heads: string[] = [];
    const logs: string[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.method !== 'eth_subscription') {
        ids[m.id] = m.result;
        return;
      }
      const { subscription, result } = m.params;
      if (subscription === ids[1]) heads.push(`${Number(result.number)}:${result.hash}`);
      else
        logs.push(
          `${result.transactionHash}@${Number(result.blockNumber)}:${result.blockHash}` +
            (result.removed === true ? ' removed' : ''),
        );
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'eth_subscribe',
        params: ['logs', { topics: [TOPIC] }],
      }),
    );
    await until(() => ids[1] !== undefined && ids[2] !== undefined, 5_000);

    const signed = async (nonce: number) => {
      const request = await wallet().prepareTransactionRequest({ data: LOG_DEPLOY, nonce });
      return wallet().signTransaction(request);
    };
    const nonce = Number(await rpc('eth_getTransactionCount', [ACCOUNT_0, 'pending']));
    const [raw1, raw2] = [await signed(nonce), await signed(nonce + 1)];
    const receiptOf = async (hash: unknown) => {
      for (;;) {
        const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as {
          blockNumber: string;
          blockHash: string;
          transactionHash: string;
        } | null;
        if (receipt !== null) return receipt;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const t1 = await receiptOf(await rpc('eth_sendRawTransaction', [raw1]));
    await rpc('evm_mine');
    const t2 = await receiptOf(await rpc('eth_sendRawTransaction', [raw2]));
    const n = Number(t1.blockNumber);
    expect(Number(t2.blockNumber)).toBe(n + 2);
    await until(() => logs.length === 2 && heads.length >= 3, 5_000);
    const at = (r: typeof t1) => `${r.transactionHash}@${Number(r.blockNumber)}:${r.blockHash}`;
    expect(logs).toEqual([at(t1), at(t2)]);
    const before = heads.length;

    await relay.cut();
    await rpc('anvil_reorg', [3, [[raw1, 1]]]);
    const moved = await receiptOf(t1.transactionHash);
    expect(Number(moved.blockNumber)).toBe(n + 1);
    expect(await rpc('eth_getTransactionReceipt', [t2.transactionHash])).toBeNull();
    const head = Number(await rpc('eth_blockNumber'));
    expect(head).toBe(n + 2);
    await relay.restore();

    // The gap filled: the new branch's headers from the fork, the logs withdrawn and re-sent.
    await until(() => heads.length >= before + 3 && logs.length >= 5, 15_000);
    await new Promise((r) => setTimeout(r, 500));
    ws.close();
    expect(logs).toEqual([at(t1), at(t2), `${at(t1)} removed`, `${at(t2)} removed`, at(moved)]);
    const canonical = async (k: number) =>
      `${k}:${((await rpc('eth_getBlockByNumber', [`0x${k.toString(16)}`, false])) as { hash: string }).hash}`;
    expect(heads.slice(before)).toEqual([
      await canonical(n),
      await canonical(n + 1),
      await canonical(n + 2),
    ]);
  }, 60_000);

  it('above 128 missed blocks, tells the client to resync and closes the session with 1012', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((r) => ws.once('open', r));
    const messages: Array<Record<string, unknown>> = [];
    let closed: { code: number; reason: string } | undefined;
    ws.on('close', (code, reason) => (closed = { code, reason: reason.toString() }));
    ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    await until(() => messages.length === 1, 5_000);
    const id = messages[0]!.result as string;
    await rpc('evm_mine');
    await until(() => messages.length === 2, 5_000);
    await relay.cut();
    await rpc('anvil_mine', ['0xc8']);
    await relay.restore();
    await until(() => closed !== undefined, 15_000);
    expect(closed).toEqual({ code: 1012, reason: 'subscription gap not filled; resubscribe' });
    expect(messages.slice(2)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message:
            `server error: subscription ${id} missed more than 128 blocks while its upstream ` +
            'node was away; subscribe again and resync',
        },
      },
    ]);
  }, 60_000);
});

/**
 * QA's repro: the node itself is stopped (SIGTERM, its state written with --state) and started
 * again on the same port; blocks with logs are mined as soon as it is back, while the hub's
 * backoff has not reconnected yet.
 */
describe('rpc-gateway WebSocket: the node restarts from its state file', () => {
  let node: AnvilInstance;
  let port: number;
  let stateDir: string;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;
  const args = () => ['--state', join(stateDir, 'state.json')];

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'ws-backfill-'));
    port = await freePort();
    [node, ns] = await Promise.all([
      startAnvil({ chainId: 1, port, args: args() }),
      provisionNamespace(),
    ]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [node.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-ws-backfill', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([node?.stop(), ns?.cleanup()]);
    await rm(stateDir, { recursive: true, force: true });
  });

  it('delivers every header and every log once across the restart', async () => {
    const rpc = async (method: string, params: unknown[] = []) => {
      const response = await fetch(node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return ((await response.json()) as { result: unknown }).result;
    };
    const mineLog = async () => {
      const hash = (await rpc('eth_sendTransaction', [
        { from: ACCOUNT_0, data: LOG_DEPLOY },
      ])) as string;
      for (;;) {
        const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as {
          blockNumber: string;
        } | null;
        if (receipt !== null) return Number(receipt.blockNumber);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const until = async (done: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((r) => ws.once('open', r));
    const ids: Record<number, string> = {};
    const heads: number[] = [];
    const logs: number[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.method !== 'eth_subscription') ids[m.id] = m.result;
      else if (m.params.subscription === ids[1]) heads.push(Number(m.params.result.number));
      else logs.push(Number(m.params.result.blockNumber));
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'eth_subscribe',
        params: ['logs', { topics: [TOPIC] }],
      }),
    );
    await until(() => ids[1] !== undefined && ids[2] !== undefined, 5_000);
    const start = Number(await rpc('eth_blockNumber'));
    const logBlocks = [await mineLog()];
    await until(() => logs.length === 1, 5_000);

    await node.stop();
    await new Promise((r) => setTimeout(r, 1_500));
    node = await startAnvil({ chainId: 1, port, args: args() });
    expect(Number(await rpc('eth_blockNumber'))).toBe(logBlocks[0]);
    for (let i = 0; i < 3; i++) {
      logBlocks.push(await mineLog());
      await rpc('evm_mine');
    }
    const last = Number(await rpc('eth_blockNumber'));
    await until(() => heads.includes(last) && logs.includes(logBlocks[3]!), 20_000);
    await new Promise((r) => setTimeout(r, 300));
    ws.close();
    expect(heads).toEqual(Array.from({ length: last - start }, (_, i) => start + 1 + i));
    expect(logs).toEqual(logBlocks);
  }, 60_000);
});
