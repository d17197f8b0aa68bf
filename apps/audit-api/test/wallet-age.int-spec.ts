import { createPublicClient, http, type PublicClient } from 'viem';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { gatherWalletEvidence, type EvidenceOptions } from '../src/evidence/wallet-evidence';
import { devnetRpc } from './support/devnet';

// anvil account 2 (a funded default account: anvil signs for it).
const FUNDER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const DAY = 86_400;

/**
 * A wallet's age is read from the node's historical state (ADR 0306): the first block where the
 * account had received native value or sent a transaction, whichever came first. A wallet
 * funded days before its first send was aged from the send (QA, stop 53's Left list).
 */
describe('audit evidence: a wallet first seen when it was funded, not when it first sent', () => {
  let anvil: AnvilInstance;
  let client: PublicClient;
  const options: EvidenceOptions = {
    lookbackBlocks: 10_000,
    mixerPools: [],
    nonceVia: 'eth_getTransactionCount',
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    client = createPublicClient({ transport: http(anvil.url) }) as PublicClient;
  }, 60_000);

  afterAll(() => anvil?.stop());

  const rpc = (method: string, params: unknown[]) => devnetRpc(anvil.url, method, params);
  /** Sends `from` → `to` (value in wei) and returns the time of the block it was mined in. */
  const send = async (from: string, to: string, value: bigint): Promise<Date> => {
    const hash = (await rpc('eth_sendTransaction', [
      { from, to, value: `0x${value.toString(16)}` },
    ])) as `0x${string}`;
    const receipt = await client.waitForTransactionReceipt({ hash });
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    return new Date(Number(block.timestamp) * 1000);
  };
  const later = (seconds: number) => rpc('evm_increaseTime', [seconds]);

  it('ages a wallet funded three days before its first send from the funding', async () => {
    const wallet = '0x5eed000000000000000000000000000000000001';
    // Some history before it, so the search has blocks on both sides.
    await send(FUNDER, '0x5eed0000000000000000000000000000000000ff', 1n);
    const funded = await send(FUNDER, wallet, 10n ** 18n);
    await later(3 * DAY);
    await rpc('anvil_impersonateAccount', [wallet]);
    const sent = await send(wallet, FUNDER, 1n);
    expect(sent.getTime() - funded.getTime()).toBeGreaterThanOrEqual(3 * DAY * 1000);

    const evidence = await gatherWalletEvidence(client, wallet, options);
    expect(evidence.txCount).toBe(1);
    expect(evidence.firstSeenAt).toEqual(funded);
  });

  it('ages a wallet that sent everything it received from the funding too (balance now zero)', async () => {
    const wallet = '0x5eed000000000000000000000000000000000002';
    await rpc('anvil_setBalance', [wallet, '0x0']);
    const funded = await send(FUNDER, wallet, 10n ** 18n);
    await later(2 * DAY);
    await rpc('anvil_impersonateAccount', [wallet]);
    // anvil charges an impersonated sender gas: send what is left after it at gas price zero.
    await rpc('anvil_setNextBlockBaseFeePerGas', ['0x0']);
    const hash = (await rpc('eth_sendTransaction', [
      { from: wallet, to: FUNDER, value: `0x${(10n ** 18n).toString(16)}`, gasPrice: '0x0' },
    ])) as `0x${string}`;
    await client.waitForTransactionReceipt({ hash });

    const evidence = await gatherWalletEvidence(client, wallet, options);
    expect([evidence.txCount, evidence.balanceWei]).toEqual([1, 0n]);
    expect(evidence.firstSeenAt).toEqual(funded);
  });

  it('has no first sighting for an address with no history, and ages a receive-only one', async () => {
    const none = await gatherWalletEvidence(
      client,
      '0x5eed000000000000000000000000000000000003',
      options,
    );
    expect(none.firstSeenAt).toBeNull();
    const receiver = '0x5eed000000000000000000000000000000000004';
    const funded = await send(FUNDER, receiver, 5n);
    await later(DAY);
    await send(FUNDER, receiver, 5n);
    expect((await gatherWalletEvidence(client, receiver, options)).firstSeenAt).toEqual(funded);
  });
});
