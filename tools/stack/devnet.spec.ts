import { DEVNET_HISTORY, devnetArgs } from './devnet';

/** The value following `flag` in `args`, or undefined when the flag is absent. */
function valueOf(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
}

describe('devnetArgs (the local stack devnets)', () => {
  const devnet = { network: 'eth-mainnet', chainId: 1, port: 7142 };

  it('bounds what anvil keeps: transactions of recent blocks, states persisted on disk', () => {
    const args = devnetArgs('127.0.0.1', devnet, '/stack/anvil-1.json');
    // Without these anvil keeps every transaction with its receipt and trace for ever, and
    // 3,600 state snapshots on disk (ADR 0504 amendment "Devnet memory").
    expect(valueOf(args, '--transaction-block-keeper')).toBe(
      String(DEVNET_HISTORY.transactionBlocks),
    );
    expect(valueOf(args, '--max-persisted-states')).toBe(String(DEVNET_HISTORY.persistedStates));
    // --prune-history keeps no historical state (no anvil_reorg) or, with a number at a 1 s
    // block time, 1,500 states in memory for ever: never passed.
    expect(args).not.toContain('--prune-history');
  });

  it('keeps what the stack reads: an hour of receipts for a backfill, the reorg window of state', () => {
    // One block a second: chain-indexer may be down an hour and still backfill every block
    // with its receipts; its window (128) and the deepest confirm_depth (96) lie well inside.
    expect(DEVNET_HISTORY.transactionBlocks).toBeGreaterThanOrEqual(3_600);
    // anvil_reorg and eth_call / eth_getBalance at a recent block need the block's state: at
    // least chain-indexer's window, so a reorg demo can reach past the deepest confirmation.
    expect(DEVNET_HISTORY.persistedStates).toBeGreaterThanOrEqual(128);
  });

  it('still loads and dumps the chain in the stack directory, one block a second', () => {
    const args = devnetArgs('127.0.0.1', devnet, '/stack/anvil-1.json');
    expect(valueOf(args, '--state')).toBe('/stack/anvil-1.json');
    expect(valueOf(args, '--block-time')).toBe('1');
    expect(valueOf(args, '--chain-id')).toBe('1');
    expect(valueOf(args, '--port')).toBe('7142');
    expect(args).not.toContain('--state-interval');
    expect(
      valueOf(
        devnetArgs('127.0.0.1', { ...devnet, stateIntervalSeconds: 5 }, '/s.json'),
        '--state-interval',
      ),
    ).toBe('5');
  });

  it('takes a smaller history for tests', () => {
    const args = devnetArgs('127.0.0.1', devnet, '/s.json', {
      transactionBlocks: 4,
      persistedStates: 3,
    });
    expect(valueOf(args, '--transaction-block-keeper')).toBe('4');
    expect(valueOf(args, '--max-persisted-states')).toBe('3');
  });
});
