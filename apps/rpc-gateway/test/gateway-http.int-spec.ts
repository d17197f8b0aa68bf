import {
  startAnvil,
  startFakeSuiUpstream,
  type AnvilInstance,
  type FakeSuiUpstream,
} from '@meridian/testing';
import { cuForCall } from '@meridian/compute-units';
import { Subjects, unpackAccounts, type UsageFlushedV2 } from '@meridian/contracts';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, http, parseEther, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;
const TOPIC = `0x${'ab'.repeat(32)}`;
// Constructor: LOG1(offset 0, size 0, TOPIC), then deploy empty code.
const LOG_DEPLOY = `0x7f${'ab'.repeat(32)}60006000a160006000f3` as Hex;
/**
 * Genesis timestamp of both eth-mainnet devnets. A block's hash covers its timestamp, and anvil
 * stamps genesis with its start second unless told: two nodes started in different seconds have
 * different genesis blocks. With the same chain id, accounts and genesis timestamp they share
 * genesis, so its hash names the same block on whichever node the gateway picks. (Blocks mined
 * later are stamped per node, so those may still differ between the two.)
 */
const ETH_GENESIS_TIMESTAMP = 1_700_000_000;

const TOKENS = {
  eth: 'tok_eth_000000000001',
  opbnb: 'tok_opbnb_0000000001',
  polygon: 'tok_polygon_00000001',
  sui: 'tok_sui_000000000001',
  slow: 'tok_ratelimited_0001',
  broke: 'tok_exhausted_000001',
  noPlan: 'tok_no_plan_00000001',
};

describe('rpc-gateway over HTTP (anvil devnets, real clients)', () => {
  let eth: AnvilInstance;
  let ethSpare: AnvilInstance;
  let opbnb: AnvilInstance;
  let polygon: AnvilInstance;
  let sui: FakeSuiUpstream;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;
  let env: Record<string, string>;
  let nc: NatsConnection;
  const usage: { accountId: string; totalCu: number }[] = [];

  beforeAll(async () => {
    [eth, ethSpare, opbnb, polygon, sui, ns] = await Promise.all([
      startAnvil({ chainId: 1, args: ['--timestamp', String(ETH_GENESIS_TIMESTAMP)] }),
      startAnvil({ chainId: 1, args: ['--timestamp', String(ETH_GENESIS_TIMESTAMP)] }),
      startAnvil({ chainId: 204 }),
      startAnvil({ chainId: 137 }),
      startFakeSuiUpstream(),
      provisionNamespace(),
    ]);
    nc = await connect({ servers: ns.url });
    const sub = nc.subscribe(`${ns.prefix}.${Subjects.billing.usageFlushedV2.all}`);
    void (async () => {
      for await (const m of sub) usage.push(...unpackAccounts(m.json<UsageFlushedV2>()));
    })();
    env = {
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': [eth.url, ethSpare.url],
        'opbnb-mainnet': [opbnb.url],
        'polygon-mainnet': [polygon.url],
      }),
      SUI_UPSTREAM_URLS: sui.url,
      USAGE_FLUSH_MS: '100',
      // Filter ids are sealed with it: the same key after a restart opens them (ADR 0202).
      FILTER_ID_KEY: 'filter-id-key-of-the-http-suite-00001',
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKENS.eth]: { accountId: 'acct-eth', network: 'eth-mainnet', planId: 'pro' },
        [TOKENS.opbnb]: { accountId: 'acct-opbnb', network: 'opbnb-mainnet', planId: 'pro' },
        [TOKENS.polygon]: { accountId: 'acct-polygon', network: 'polygon-mainnet', planId: 'pro' },
        [TOKENS.sui]: { accountId: 'acct-sui', network: 'sui-mainnet', planId: 'pro' },
        [TOKENS.slow]: { accountId: 'acct-slow', network: 'eth-mainnet', nodeRps: 2 },
        [TOKENS.broke]: { accountId: 'acct-broke', network: 'eth-mainnet', status: 'exhausted' },
        // A team without a plan and no CU: billing-ledger's balance state says exhausted.
        [TOKENS.noPlan]: {
          accountId: 'acct-no-plan',
          network: 'eth-mainnet',
          planId: null,
          status: 'exhausted',
        },
      }),
    };
    gateway = await startGateway(env);
  });

  afterAll(async () => {
    await gateway?.stop();
    await nc?.close();
    await Promise.all([
      eth?.stop(),
      ethSpare?.stop(),
      opbnb?.stop(),
      polygon?.stop(),
      sui?.close(),
      ns?.cleanup(),
    ]);
  });

  const url = (token: string) => `${gateway.url}/${token}/`;

  it('viem over HTTP: chain id answered locally, blocks, balances, a signed transaction and its logs', async () => {
    const client = createPublicClient({ transport: http(url(TOKENS.opbnb)) });
    expect(await client.getChainId()).toBe(204);
    const account = privateKeyToAccount(KEY_0);
    const balance = await client.getBalance({ address: account.address });
    expect(balance).toBe(parseEther('10000'));
    const wallet = createWalletClient({
      account,
      transport: http(url(TOKENS.opbnb)),
      chain: {
        id: 204,
        name: 'opbnb',
        nativeCurrency: { name: 'BNB', symbol: 'BNB', decimals: 18 },
        rpcUrls: { default: { http: [url(TOKENS.opbnb)] } },
      },
    });
    const hash = await wallet.sendTransaction({ data: LOG_DEPLOY });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    expect(receipt.status).toBe('success');
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.hash).toBe(receipt.blockHash);
    const logs = await client.getLogs({
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]!.topics[0]).toBe(TOPIC);
  });

  it('ethers over HTTP: block number, balance, a signed transfer', async () => {
    const provider = new JsonRpcProvider(url(TOKENS.polygon), new Network('polygon-devnet', 137), {
      staticNetwork: true,
    });
    const wallet = new Wallet(KEY_0, provider);
    const before = await provider.getBlockNumber();
    const tx = await wallet.sendTransaction({
      to: '0x000000000000000000000000000000000000dEaD',
      value: 12345n,
    });
    const mined = await tx.wait();
    expect(mined?.status).toBe(1);
    // The receipt's block, not a second getBlockNumber(): ethers reuses an identical call's answer
    // for 250 ms, so a fast automined transfer could read the stale number.
    expect(mined!.blockNumber).toBeGreaterThan(before);
    expect(await provider.getBalance('0x000000000000000000000000000000000000dEaD')).toBe(12345n);
  });

  it('re-sending the same signed transaction answers its hash ("already known" / duplicate handling)', async () => {
    const account = privateKeyToAccount(KEY_0);
    const wallet = createWalletClient({
      account,
      transport: http(url(TOKENS.opbnb)),
      chain: {
        id: 204,
        name: 'opbnb',
        nativeCurrency: { name: 'BNB', symbol: 'BNB', decimals: 18 },
        rpcUrls: { default: { http: [url(TOKENS.opbnb)] } },
      },
    });
    // The account has sent transactions in earlier tests: take its next nonce.
    const nonce = await createPublicClient({
      transport: http(url(TOKENS.opbnb)),
    }).getTransactionCount({ address: account.address, blockTag: 'pending' });
    const raw = await wallet.signTransaction({
      to: '0x000000000000000000000000000000000000bEEF',
      value: 1n,
      nonce,
      gas: 21000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const first = await rpc(url(TOKENS.opbnb), {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_sendRawTransaction',
      params: [raw],
    });
    const hash = (first.json as { result: string }).result;
    if (hash === undefined) throw new Error(first.text);
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    const again = await rpc(url(TOKENS.opbnb), {
      jsonrpc: '2.0',
      id: 2,
      method: 'eth_sendRawTransaction',
      params: [raw],
    });
    const body = again.json as { result?: string; error?: { message: string } };
    // anvil has mined it already; it answers either the hash, or a nonce error for this exact tx.
    if (body.result !== undefined) expect(body.result).toBe(hash);
    else expect(body.error!.message).toMatch(/nonce|known/i);
  });

  it('batches keep request order and echo every id exactly (string, number, beyond 2^53)', async () => {
    const body =
      '[{"jsonrpc":"2.0","id":"a","method":"eth_blockNumber"},{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":3,"method":"debug_traceBlock","params":["0x1"]},{"jsonrpc":"2.0","id":4,"method":"net_version","params":[]}]';
    const answer = await rpc(url(TOKENS.opbnb), body);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"id":123456789012345678901234567890,"result":"0xcc"');
    const items = answer.json as {
      id: unknown;
      result?: unknown;
      error?: { code: number; message: string };
    }[];
    // eslint-disable-next-line no-loss-of-precision -- the client sent this id; JSON.parse rounds it, the raw text does not
    expect(items.map((i) => i.id)).toEqual(['a', 123456789012345678901234567890, 3, 4]);
    expect(items[0]!.result).toMatch(/^0x/);
    expect(items[2]!.error).toEqual({
      code: -32601,
      message: expect.stringContaining('debug_traceBlock'),
    });
    expect(items[3]!.result).toBe('204');
  });

  it('filters survive a gateway restart (same FILTER_ID_KEY): the filter id routes to the node that created it', async () => {
    const created = await rpc(url(TOKENS.eth), {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_newBlockFilter',
      params: [],
    });
    const filterId = (created.json as { result: string }).result;
    expect(filterId).toMatch(/^0x[0-9a-f]{9,}$/);
    await gateway.stop();
    // Mine on both nodes: only the creating node knows the filter.
    await Promise.all(
      [eth, ethSpare].map((node) =>
        rpc(node.url, { jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
      ),
    );
    gateway = await startGateway(env, gateway.port);
    const viem = createPublicClient({ transport: http(url(TOKENS.eth)) });
    const changes = await viem.request({
      method: 'eth_getFilterChanges',
      params: [filterId as Hex],
    });
    expect(Array.isArray(changes) && changes.length).toBeGreaterThanOrEqual(1);
    const removed = await rpc(url(TOKENS.eth), {
      jsonrpc: '2.0',
      id: 3,
      method: 'eth_uninstallFilter',
      params: [filterId],
    });
    expect((removed.json as { result: boolean }).result).toBe(true);
    const unknown = await rpc(url(TOKENS.eth), {
      jsonrpc: '2.0',
      id: 4,
      method: 'eth_getFilterChanges',
      params: ['0xdeadbeef01'],
    });
    expect((unknown.json as { error: { code: number } }).error.code).toBe(-32000);
  });

  it('immutable answers come from the cache (block by hash)', async () => {
    // The eth-mainnet pool has two nodes and the gateway may ask either: look up a block both
    // have (their shared genesis, see ETH_GENESIS_TIMESTAMP), not `latest` of one of them, which
    // the other node may not know (null: not cacheable, and asked again).
    const genesisHash = async (nodeUrl: string) =>
      (
        (
          await rpc(nodeUrl, {
            jsonrpc: '2.0',
            id: 1,
            method: 'eth_getBlockByNumber',
            params: ['0x0', false],
          })
        ).json as { result: { hash: Hex } }
      ).result.hash;
    const hash = await genesisHash(eth.url);
    expect(await genesisHash(ethSpare.url)).toBe(hash);

    const client = createPublicClient({ transport: http(url(TOKENS.eth)) });
    const cache = (result: 'hit' | 'miss') =>
      metricValue(gateway.url, 'rpc_gateway_cache_total', { network: 'eth-mainnet', result });
    // Every attempt at an eth-mainnet node (health checks are not counted here).
    const nodeCalls = () =>
      metricValue(gateway.url, 'rpc_gateway_upstream_requests_total', { network: 'eth-mainnet' });
    const [hits, misses, calls] = await Promise.all([cache('hit'), cache('miss'), nodeCalls()]);

    const first = await client.getBlock({ blockHash: hash });
    expect(first.hash).toBe(hash);
    expect([await cache('hit'), await cache('miss'), await nodeCalls()]).toEqual([
      hits,
      misses + 1,
      calls + 1,
    ]);

    const second = await client.getBlock({ blockHash: hash });
    expect(second).toEqual(first);
    // Served from the cache: a hit, and no further call reached a node.
    expect([await cache('hit'), await cache('miss'), await nodeCalls()]).toEqual([
      hits + 1,
      misses + 1,
      calls + 1,
    ]);
  });

  it('network S: params checked before any upstream call, relayed otherwise; node trouble and unreachable nodes', async () => {
    const shared = await startGateway({ ...env, REGION: 'shared', GRPC_ENABLED: 'false' });
    const url = (token: string) => `${shared.url}/${token}`;
    try {
      const ok = await rpc(url(TOKENS.sui), {
        jsonrpc: '2.0',
        id: 1,
        method: 'suix_getLatestSuiSystemState',
        params: [],
      });
      expect((ok.json as { result: { epoch: string; safeMode: boolean } }).result).toMatchObject({
        epoch: '512',
        safeMode: false,
      });
      const past = await rpc(url(TOKENS.sui), {
        jsonrpc: '2.0',
        id: 2,
        method: 'sui_tryMultiGetPastObjects',
        params: [[{ objectId: '0x5', version: '1' }], { showContent: true }],
      });
      expect((past.json as { result: { status: string }[] }).result[0]!.status).toBe(
        'VersionFound',
      );
      const callsBefore = sui.calls.filter(
        (m) => m !== 'sui_getLatestCheckpointSequenceNumber',
      ).length;
      const bad = await rpc(url(TOKENS.sui), {
        jsonrpc: '2.0',
        id: 3,
        method: 'sui_tryMultiGetPastObjects',
        params: [[{ objectId: '0x5', version: 1 }]],
      });
      expect(bad.json).toEqual({
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32602,
          message:
            'invalid params: past_objects[0].version is required and must be a decimal string (u64)',
        },
      });
      expect(sui.calls.filter((m) => m !== 'sui_getLatestCheckpointSequenceNumber').length).toBe(
        callsBefore,
      );
      sui.mode = 'trouble';
      const trouble = await rpc(url(TOKENS.sui), {
        jsonrpc: '2.0',
        id: 4,
        method: 'suix_getLatestSuiSystemState',
        params: [],
      });
      expect((trouble.json as { error: { code: number } }).error.code).toBe(-32603);
      sui.mode = 'ok';
    } finally {
      await shared.stop();
    }
    const unreachable = await startGateway({
      ...env,
      REGION: 'shared',
      SUI_UPSTREAM_URLS: 'http://127.0.0.1:1',
      GRPC_ENABLED: 'false',
    });
    try {
      const down = await rpc(`${unreachable.url}/${TOKENS.sui}`, {
        jsonrpc: '2.0',
        id: 5,
        method: 'suix_getLatestSuiSystemState',
        params: [],
      });
      expect((down.json as { error: { code: number } }).error.code).toBe(-32000);
    } finally {
      await unreachable.stop();
    }
  });

  describe('every error row of COMPAT "Node access"', () => {
    const call = { jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] };

    it('unknown token → 401 with a JSON body', async () => {
      const answer = await rpc(url('tok_nope_nope_nope'), call);
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({
        error: { message: expect.stringContaining('unauthorized') },
      });
    });

    it('unknown path, sub-path or GET form → 404 JSON', async () => {
      expect((await rpc(`${gateway.url}/${TOKENS.eth}/extra/path`, call)).status).toBe(404);
      const get = await fetch(url(TOKENS.eth));
      expect(get.status).toBe(404);
      expect(await get.json()).toMatchObject({ error: 'not_found' });
    });

    it('a network not offered at this endpoint → 404 (S lives at the shared endpoint only)', async () => {
      const shared = await startGateway({ ...env, REGION: 'shared', GRPC_ENABLED: 'false' });
      try {
        expect((await rpc(`${shared.url}/${TOKENS.eth}`, call)).status).toBe(404);
        expect(
          (
            await rpc(`${shared.url}/${TOKENS.sui}`, {
              jsonrpc: '2.0',
              id: 1,
              method: 'suix_getLatestSuiSystemState',
              params: [],
            })
          ).status,
        ).toBe(200);
      } finally {
        await shared.stop();
      }
    });

    it('plan rate limit → 429 with Retry-After', async () => {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 4; i++) {
        const answer = await rpc(url(TOKENS.slow), call);
        statuses.push(answer.status);
        if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
      }
      expect(statuses.slice(0, 2)).toEqual([200, 200]);
      expect(statuses).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    });

    it('CU exhausted → 402 with a JSON-RPC error saying so', async () => {
      const answer = await rpc(url(TOKENS.broke), call);
      expect(answer.status).toBe(402);
      expect(answer.json).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        error: { message: expect.stringContaining('exhausted') },
      });
    });

    it('no plan → 402 naming it (data.code plan_required), over HTTP and in a WebSocket message', async () => {
      const expected = {
        code: -32040,
        message: expect.stringContaining('this account has no plan'),
        data: { code: 'plan_required' },
      };
      const answer = await rpc(url(TOKENS.noPlan), call);
      expect(answer.status).toBe(402);
      expect(answer.json).toEqual({ jsonrpc: '2.0', id: 7, error: expected });
      const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKENS.noPlan}/`);
      try {
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        const message = new Promise<unknown>((resolve) =>
          ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))),
        );
        ws.send(JSON.stringify(call));
        expect(await message).toEqual({ jsonrpc: '2.0', id: 7, error: expected });
      } finally {
        ws.close();
      }
    });

    it.each([
      ['-32700 parse error', '{"jsonrpc":"2.0",', -32700],
      ['-32600 invalid request', '{"jsonrpc":"1.0","id":1,"method":"eth_blockNumber"}', -32600],
      [
        '-32601 method not on this network (names it)',
        '{"jsonrpc":"2.0","id":1,"method":"eth_getWork","params":[]}',
        -32601,
      ],
      [
        '-32601 WebSocket-only method over HTTP',
        '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}',
        -32601,
      ],
      [
        '-32602 invalid params',
        '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":["nope"]}',
        -32602,
      ],
      [
        '-32005 eth_getLogs range too large',
        '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0","toBlock":"0x186a0"}]}',
        -32005,
      ],
      [
        '-32005 eth_getLogs range one block over the cap (0x0..0x2710 is 10,001 blocks)',
        '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0","toBlock":"0x2710"}]}',
        -32005,
      ],
      [
        '-32005 eth_getLogs from earliest to a number beyond the cap',
        '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"earliest","toBlock":"0x186a0"}]}',
        -32005,
      ],
      [
        '-32005 batch above the cap',
        JSON.stringify(
          Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' })),
        ),
        -32005,
      ],
    ])('%s (HTTP 200)', async (_name, body, code) => {
      const answer = await rpc(url(TOKENS.opbnb), body);
      expect(answer.status).toBe(200);
      expect((answer.json as { error: { code: number; message: string } }).error.code).toBe(code);
      if (code === -32601 && body.includes('eth_getWork'))
        expect((answer.json as { error: { message: string } }).error.message).toContain(
          'eth_getWork',
        );
    });

    it('X-Request-Id is echoed', async () => {
      const answer = await rpc(url(TOKENS.eth), call, { 'x-request-id': 'req-abc-123' });
      expect(answer.headers.get('x-request-id')).toBe('req-abc-123');
    });
  });

  it('failover: with one of two upstreams killed mid-test, retry-safe calls keep succeeding', async () => {
    const client = createPublicClient({ transport: http(url(TOKENS.eth), { retryCount: 0 }) });
    await client.getBlockNumber();
    await ethSpare.stop();
    for (let i = 0; i < 10; i++) {
      const account = privateKeyToAccount(KEY_0);
      expect(await client.getBalance({ address: account.address })).toBeGreaterThan(0n);
    }
    expect(
      await metricValue(gateway.url, 'rpc_gateway_upstream_requests_total', {
        network: 'eth-mainnet',
        outcome: 'not_sent',
      }),
    ).toBeGreaterThanOrEqual(0);
  });

  it('metering: the usage events carry exactly the CU of the calls served, per account', async () => {
    const before = usage
      .filter((u) => u.accountId === 'acct-polygon')
      .reduce((s, u) => s + u.totalCu, 0);
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getWork', params: [] },
    ];
    await rpc(url(TOKENS.polygon), batch);
    await rpc(url(TOKENS.polygon), { jsonrpc: '2.0', id: 4, method: 'eth_gasPrice', params: [] });
    const expected = before + 3 * cuForCall('polygon-mainnet', 'eth_blockNumber');
    const deadline = Date.now() + 5_000;
    let total = before;
    while (Date.now() < deadline) {
      total = usage
        .filter((u) => u.accountId === 'acct-polygon')
        .reduce((s, u) => s + u.totalCu, 0);
      if (total >= expected) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(total).toBe(expected);
  });
});
