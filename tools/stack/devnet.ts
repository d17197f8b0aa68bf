import { join } from 'node:path';
import type { StackLayout } from './layout';
import { answers, waitFor } from './probe';
import type { ProcessGroup } from './process-group';
import { anvilBinaryPath } from '@meridian/testing';

export interface RunningDevnet {
  network: string;
  chainId: number;
  url: string;
}

/**
 * What a devnet keeps, so `npm start` can run for weeks (ADR 0504 amendment "Devnet memory").
 * Measured on anvil 1.7.1 at one block a second and 3 tx/s: without these flags it keeps every
 * transaction with its receipt and trace for ever, and state snapshots on disk for 3,600 blocks.
 *
 * - `transactionBlocks` (`--transaction-block-keeper`): blocks whose transactions and receipts
 *   stay readable; an older block keeps its header and loses its body. At one block a second
 *   that is an hour: chain-indexer may be down that long and still backfill every block with
 *   its receipts (its window is 128 blocks, the deepest confirm_depth 96, the gateway's
 *   finality depth 64; the README's examples read the head).
 * - `persistedStates` (`--max-persisted-states`): state snapshots anvil moves to disk once
 *   its memory holds its own maximum (at a block time under 3 s: 1,500, then fewer, a block at
 *   a time). With those in memory, the state of at least the last 128 blocks answers
 *   (`eth_getBalance` or `eth_call` at a number, `anvil_reorg`), chain-indexer's window.
 *
 * Not `--prune-history`: without a number it keeps no historical state at all (`anvil_reorg`
 * fails, which the webhooks e2e test uses), and with one, at this block time, anvil still keeps
 * 1,500 states in memory and never moves them out (1.7 GB measured). anvil drops no header:
 * about 2 KB a block stays (~170 MB a day per devnet), in memory and in the state file.
 */
export const DEVNET_HISTORY = { transactionBlocks: 3_600, persistedStates: 128 } as const;

/** anvil's arguments for one devnet whose chain is dumped to and loaded from `statePath`. */
export function devnetArgs(
  host: string,
  devnet: StackLayout['devnets'][number],
  statePath: string,
  history: { transactionBlocks: number; persistedStates: number } = DEVNET_HISTORY,
): string[] {
  return [
    '--host',
    host,
    '--port',
    String(devnet.port),
    '--chain-id',
    String(devnet.chainId),
    '--block-time',
    '1',
    '--state',
    statePath,
    ...(devnet.stateIntervalSeconds === undefined
      ? []
      : ['--state-interval', String(devnet.stateIntervalSeconds)]),
    '--transaction-block-keeper',
    String(history.transactionBlocks),
    '--max-persisted-states',
    String(history.persistedStates),
    '--silent',
  ];
}

/**
 * One anvil devnet standing in for a relayed network. Its state is dumped to the stack
 * directory on exit (and every `stateIntervalSeconds` when set) and loaded on the next start,
 * so balances, contracts and blocks persist (the transactions of the last
 * `DEVNET_HISTORY.transactionBlocks` blocks).
 */
export async function startDevnet(
  group: ProcessGroup,
  layout: StackLayout,
  devnet: StackLayout['devnets'][number],
): Promise<RunningDevnet> {
  const url = `http://${layout.host}:${devnet.port}`;
  if (await answers(layout.host, devnet.port))
    throw new Error(`port ${devnet.port} for devnet ${devnet.network} is taken`);
  const state = join(layout.dir, `anvil-${devnet.chainId}.json`);
  group.start(`anvil-${devnet.chainId}`, anvilBinaryPath(), devnetArgs(layout.host, devnet, state));
  await waitFor(`devnet ${devnet.network}`, () => answers(layout.host, devnet.port), 30_000);
  return { network: devnet.network, chainId: devnet.chainId, url };
}
