import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anvilBinaryPath, freePort } from '@meridian/testing';
import { devnetArgs, startDevnet } from './devnet';
import type { StackLayout } from './layout';
import { answers, waitFor } from './probe';
import { ProcessGroup } from './process-group';

const FUNDED = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's account 0
const PAYEE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

async function rpc(url: string, method: string, params: unknown[] = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: unknown; error?: { message: string } };
}

async function result<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc(url, method, params);
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

/** Sends 1 wei to PAYEE and resolves with the mined receipt (blocks come every second). */
async function transfer(url: string) {
  const hash = await result<string>(url, 'eth_sendTransaction', [
    { from: FUNDED, to: PAYEE, value: '0x1' },
  ]);
  let receipt: { blockNumber: string } | null = null;
  await waitFor(
    'the transfer mined',
    async () => {
      receipt = await result(url, 'eth_getTransactionReceipt', [hash]);
      return receipt !== null;
    },
    10_000,
  );
  return { hash, block: BigInt(receipt!.blockNumber) };
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

describe('the local stack devnet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-devnet-'));
  const layout = { host: '127.0.0.1', dir } as StackLayout;
  let group: ProcessGroup | undefined;
  let child: ChildProcess | undefined;

  afterAll(async () => {
    await group?.stop(2_000);
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes history and state flags the installed anvil documents', () => {
    const help = execFileSync(anvilBinaryPath(), ['--help'], { encoding: 'utf8' });
    const args = devnetArgs(
      '127.0.0.1',
      { network: 'n', chainId: 1, port: 1, stateIntervalSeconds: 1 },
      's',
    );
    for (const flag of [
      '--transaction-block-keeper',
      '--max-persisted-states',
      '--state',
      '--state-interval',
      '--block-time',
    ]) {
      expect(args).toContain(flag);
      expect(help).toMatch(new RegExp(`^\\s+(-\\w, )?${flag} `, 'm'));
    }
  });

  it('keeps its chain, balances and recent receipts across a restart, and a reorg of recent blocks', async () => {
    const devnet = { network: 'eth-mainnet', chainId: 1, port: await freePort() };
    group = new ProcessGroup(() => undefined);
    const { url } = await startDevnet(group, layout, devnet);
    const sent = await transfer(url);
    const balance = await result<string>(url, 'eth_getBalance', [PAYEE, 'latest']);
    // A recent block's state answers (eth_call, eth_getBalance at a number, anvil_reorg): a
    // reorg of the block after the transfer's (the webhooks e2e test reorgs its own block).
    await waitFor(
      'a block after the transfer',
      async () => BigInt(await result<string>(url, 'eth_blockNumber')) > sent.block,
      10_000,
    );
    expect(await result(url, 'eth_getBalance', [PAYEE, hex(sent.block)])).toBe(balance);
    expect((await rpc(url, 'anvil_reorg', [1, []])).error).toBeUndefined();
    const head = BigInt(await result<string>(url, 'eth_blockNumber'));
    expect(await result(url, 'eth_getBalance', [PAYEE, 'latest'])).toBe(balance);

    await group.stop(); // SIGTERM: anvil dumps its state to the stack directory
    group = new ProcessGroup(() => undefined);
    await startDevnet(group, layout, devnet);
    expect(BigInt(await result<string>(url, 'eth_blockNumber'))).toBeGreaterThanOrEqual(head);
    expect(await result(url, 'eth_getBalance', [PAYEE, 'latest'])).toBe(balance);
    const receipt = await result<{ blockNumber: string } | null>(url, 'eth_getTransactionReceipt', [
      sent.hash,
    ]);
    expect(receipt?.blockNumber).toBe(hex(sent.block));
  });

  it('forgets the transactions and receipts of blocks past its history, keeping their headers', async () => {
    const port = await freePort();
    const devnet = { network: 'eth-mainnet', chainId: 1, port };
    child = spawn(
      anvilBinaryPath(),
      devnetArgs('127.0.0.1', devnet, join(dir, 'small.json'), {
        transactionBlocks: 4,
        persistedStates: 3,
      }),
      { stdio: 'ignore' },
    );
    await waitFor('anvil', () => answers('127.0.0.1', port), 30_000);
    const url = `http://127.0.0.1:${port}`;
    const sent = await transfer(url);
    expect(await result(url, 'eth_getTransactionByHash', [sent.hash])).not.toBeNull();
    await result(url, 'anvil_mine', [10]);
    expect(await result(url, 'eth_getTransactionReceipt', [sent.hash])).toBeNull();
    expect(await result(url, 'eth_getTransactionByHash', [sent.hash])).toBeNull();
    const block = await result<{ number: string; transactions: unknown[] }>(
      url,
      'eth_getBlockByNumber',
      [hex(sent.block), false],
    );
    expect(block.number).toBe(hex(sent.block));
    expect(block.transactions).toEqual([]);
    // A block within the history keeps its transactions.
    const recent = await transfer(url);
    expect(await result(url, 'eth_getTransactionReceipt', [recent.hash])).not.toBeNull();
  });
});
