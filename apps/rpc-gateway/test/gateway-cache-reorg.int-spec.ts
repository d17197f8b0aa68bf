import { reorgWindowBlocks } from '@meridian/networks';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

/**
 * The answer cache across a reorg (QA: a receipt read through the gateway was served from the
 * cache after `anvil_reorg` re-mined its transaction in another block, or dropped it, so a
 * client counting confirmations saw an orphaned transaction confirmed). An answer by block number
 * or transaction hash is cached only once its block is below the network's reorg window
 * (`finalizedHeight` of @meridian/networks: 128 blocks on eth-mainnet), the window within which
 * chain-indexer still retracts a reorg (QA: with 64, a reorg 80 deep left the orphaned block in
 * the cache while the webhooks said `removed`).
 */
const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;
const SENDER = privateKeyToAccount(KEY_0);
const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const TOKEN = 'tok_eth_reorg_000001';
const FINALITY = reorgWindowBlocks('eth-mainnet');

interface Receipt {
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
}

describe('rpc-gateway cache across reorgs (anvil)', () => {
  let node: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [node, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [node.url] }),
      // The head the cache judges finality by moves only when the test asks (healthCheckNow).
      HEALTH_INTERVAL_MS: '600000',
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-reorg', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
    await call(node.url, 'anvil_mine', ['0xa']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([node?.stop(), ns?.cleanup()]);
  });

  async function call(url: string, method: string, params: unknown[]): Promise<unknown> {
    const answer = await rpc(url, { jsonrpc: '2.0', id: 1, method, params });
    const json = answer.json as { result?: unknown; error?: unknown };
    if (json.error !== undefined) throw new Error(`${method}: ${JSON.stringify(json.error)}`);
    return json.result;
  }
  const viaGateway = (method: string, params: unknown[]) =>
    call(`${gateway.url}/${TOKEN}/`, method, params);
  const viaNode = (method: string, params: unknown[]) => call(node.url, method, params);

  let transfers = 0;
  /**
   * A signed transfer: the same bytes mined again in a reorg keep its hash. Each its own value:
   * after a reorg dropped one, the next has its nonce, and would otherwise have its hash too.
   */
  async function signedTransfer(): Promise<Hex> {
    const nonce = Number(await viaNode('eth_getTransactionCount', [SENDER.address, 'latest']));
    return SENDER.signTransaction({
      chainId: 1,
      type: 'eip1559',
      nonce,
      to: TO,
      value: BigInt(++transfers),
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
  }

  /** Sends a transfer (anvil mines it at once) and lets the gateway see the new head. */
  async function mined(): Promise<{ raw: Hex; hash: string; block: number }> {
    const raw = await signedTransfer();
    const hash = (await viaNode('eth_sendRawTransaction', [raw])) as string;
    // anvil answers the hash before its automatic block is in: wait for the receipt.
    let receipt: Receipt | null = null;
    for (let i = 0; receipt === null && i < 100; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      receipt = (await viaNode('eth_getTransactionReceipt', [hash])) as Receipt | null;
    }
    if (receipt === null) throw new Error(`${hash} was not mined`);
    await gateway.runtime.healthCheckNow();
    return { raw, hash, block: Number(receipt.blockNumber) };
  }

  const cache = (result: 'hit' | 'miss') =>
    metricValue(gateway.url, 'rpc_gateway_cache_total', { network: 'eth-mainnet', result });
  const nodeCalls = () =>
    metricValue(gateway.url, 'rpc_gateway_upstream_requests_total', { network: 'eth-mainnet' });

  it('a transaction re-mined one block later by a reorg: the gateway answers the new block', async () => {
    const tx = await mined();
    await viaNode('anvil_mine', ['0x1']);
    await gateway.runtime.healthCheckNow();
    const before = (await viaGateway('eth_getTransactionReceipt', [tx.hash])) as Receipt;
    expect(Number(before.blockNumber)).toBe(tx.block);
    expect(
      Number(((await viaGateway('eth_getTransactionByHash', [tx.hash])) as Receipt).blockNumber),
    ).toBe(tx.block);

    // The last two blocks replaced; the same transaction mined in the second new one.
    await viaNode('anvil_reorg', [2, [[tx.raw, 1]]]);
    await gateway.runtime.healthCheckNow();
    const after = (await viaNode('eth_getTransactionReceipt', [tx.hash])) as Receipt;
    expect(Number(after.blockNumber)).toBe(tx.block + 1);

    expect(await viaGateway('eth_getTransactionReceipt', [tx.hash])).toEqual(after);
    expect(await viaGateway('eth_getTransactionByHash', [tx.hash])).toEqual(
      await viaNode('eth_getTransactionByHash', [tx.hash]),
    );
  });

  it('a transaction dropped by a reorg: the gateway answers what the node answers (null)', async () => {
    const tx = await mined();
    expect(
      Number(((await viaGateway('eth_getTransactionReceipt', [tx.hash])) as Receipt).blockNumber),
    ).toBe(tx.block);
    await viaGateway('eth_getTransactionByHash', [tx.hash]);

    await viaNode('anvil_reorg', [3, []]);
    await gateway.runtime.healthCheckNow();
    const receipt = await viaNode('eth_getTransactionReceipt', [tx.hash]);
    expect(receipt).toBeNull();

    expect(await viaGateway('eth_getTransactionReceipt', [tx.hash])).toEqual(receipt);
    expect(await viaGateway('eth_getTransactionByHash', [tx.hash])).toEqual(
      await viaNode('eth_getTransactionByHash', [tx.hash]),
    );
  });

  it('a reorg 80 deep (deeper than the old 64): the orphaned block and receipt are not served', async () => {
    const tx = await mined();
    await viaNode('anvil_mine', ['0x4f']);
    await gateway.runtime.healthCheckNow();
    const number = `0x${tx.block.toString(16)}`;
    // Asked twice each while 80 deep: the old gateway cached both as final here.
    for (let i = 0; i < 2; i++) {
      await viaGateway('eth_getBlockByNumber', [number, false]);
      await viaGateway('eth_getTransactionReceipt', [tx.hash]);
    }
    const orphaned = (await viaNode('eth_getBlockByNumber', [number, false])) as { hash: string };

    // The last 80 blocks replaced; the transaction dropped from the new branch.
    await viaNode('anvil_reorg', [80, []]);
    await gateway.runtime.healthCheckNow();
    const canonical = (await viaNode('eth_getBlockByNumber', [number, false])) as { hash: string };
    expect(canonical.hash).not.toBe(orphaned.hash);
    expect(await viaNode('eth_getTransactionReceipt', [tx.hash])).toBeNull();

    expect(await viaGateway('eth_getBlockByNumber', [number, false])).toEqual(canonical);
    expect(await viaGateway('eth_getTransactionReceipt', [tx.hash])).toBeNull();
  });

  it('a finalized transaction is served from the cache', async () => {
    const tx = await mined();
    await viaNode('anvil_mine', [`0x${FINALITY.toString(16)}`]);
    await gateway.runtime.healthCheckNow();

    const [hits, misses, calls] = await Promise.all([cache('hit'), cache('miss'), nodeCalls()]);
    const first = (await viaGateway('eth_getTransactionReceipt', [tx.hash])) as Receipt;
    expect(Number(first.blockNumber)).toBe(tx.block);
    expect([await cache('hit'), await cache('miss'), await nodeCalls()]).toEqual([
      hits,
      misses + 1,
      calls + 1,
    ]);

    expect(await viaGateway('eth_getTransactionReceipt', [tx.hash])).toEqual(first);
    // A hit, and no further call reached the node.
    expect([await cache('hit'), await cache('miss'), await nodeCalls()]).toEqual([
      hits + 1,
      misses + 1,
      calls + 1,
    ]);
  });

  it('one block short of finalized: asked of the node every time', async () => {
    const tx = await mined();
    await viaNode('anvil_mine', [`0x${(FINALITY - 1).toString(16)}`]);
    await gateway.runtime.healthCheckNow();

    const [hits, calls] = await Promise.all([cache('hit'), nodeCalls()]);
    await viaGateway('eth_getTransactionReceipt', [tx.hash]);
    await viaGateway('eth_getTransactionReceipt', [tx.hash]);
    expect([await cache('hit'), await nodeCalls()]).toEqual([hits, calls + 2]);
  });
});
