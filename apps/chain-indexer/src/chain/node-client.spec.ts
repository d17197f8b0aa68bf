import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeClient, type RawBlock } from './node-client';

const BLOCK_HASH = `0x${'ab'.repeat(32)}`;
const TX_HASH = `0x${'cd'.repeat(32)}`;

/** A node whose eth_getBlockReceipts answers one receipt with `logBytes` of log data. */
async function nodeAnswering(logBytes: number): Promise<{ url: string; server: Server }> {
  const data = `0x${'00'.repeat(logBytes)}`;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      const result =
        method === 'eth_getBlockReceipts'
          ? [
              {
                transactionHash: TX_HASH,
                blockHash: BLOCK_HASH,
                logs: [{ address: `0x${'11'.repeat(20)}`, topics: [], data, logIndex: '0x0' }],
              },
            ]
          : null;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('NodeClient reading a large answer from a real HTTP node', () => {
  let node: { url: string; server: Server } | undefined;
  afterEach(async () => {
    await new Promise((resolve) => node?.server.close(resolve));
    node = undefined;
  });

  it('reads receipts above viem’s 10 MiB default (QA: 10.8 MB of receipts stalled a network)', async () => {
    node = await nodeAnswering(6 * 1024 * 1024); // 12 MiB of hex in the answer
    const client = new NodeClient('polygon-mainnet', [
      { url: node.url, wsUrl: undefined },
    ] as never);
    const block = { hash: BLOCK_HASH, transactions: [{ hash: TX_HASH }] } as unknown as RawBlock;
    const [receipt] = await client.receiptsOf(block);
    expect(receipt!.transactionHash).toBe(TX_HASH);
    expect((receipt!.logs[0] as { data: string }).data.length).toBe(2 + 12 * 1024 * 1024);
  });
});
