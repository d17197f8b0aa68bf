import { chainBlockId, Events, type ChainBlock } from '@meridian/contracts';
import { logEmitterInitCode, startAnvil, type AnvilInstance } from '@meridian/testing';
import { ChainFeed, MatcherHarness, sendMined, until } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const NETWORK = 'opbnb-mainnet';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let feed: ChainFeed;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 204 });
  await h.start();
  await h.matcher();
  feed = new ChainFeed(anvil.url, NETWORK, h.publisher);
}, 60_000);

afterAll(async () => {
  await h.stop();
  await anvil.stop();
});

/**
 * A block whose receipt is too large for one CHAIN message comes as parts holding slices of
 * that receipt (chain-indexer README "Blocks on the stream"), and a log too large alone comes
 * without its data, marked `omitted`. The matcher pairs nothing by position: each log of each
 * slice is its own event, and the marker reaches the payload's `raw`.
 */
describe('a receipt whose logs are spread over parts', () => {
  it('matches every log of a watched emitter once, in order, the omitted marker forwarded', async () => {
    const created = await sendMined(anvil.url, { from: DEPLOYER, data: logEmitterInitCode(6, 64) });
    const emitter = created['contractAddress'] as string;
    await h.createWebhook({
      id: 'wh_emitter',
      accountId: 'acc_1',
      network: NETWORK,
      addresses: [emitter],
    });
    const whole = await feed.block(Number(created.blockNumber));
    const receipt = whole.receipts.find((r) => r.transactionHash === created.transactionHash)!;
    expect(receipt.logs).toHaveLength(6);
    // The indexer's shapes: the last log as published when too large for a message alone.
    const logs = receipt.logs.map((l, i) =>
      i === 5 ? { ...l, data: '0x', omitted: { data: 64 } } : l,
    );
    const slice = (from: number, to: number) => ({ ...receipt, logs: logs.slice(from, to) });
    const parts: Pick<ChainBlock, 'transactions' | 'receipts'>[] = [
      { transactions: whole.transactions, receipts: [slice(0, 2)] },
      { transactions: [], receipts: [slice(2, 4)] },
      { transactions: [], receipts: [slice(4, 6)] },
    ];
    for (const [index, part] of parts.entries())
      await h.publisher.publish(Events.chainBlock, {
        ...whole,
        ...part,
        id: chainBlockId(NETWORK, whole.hash, index),
        part: { index, count: parts.length },
      });
    await until(() => h.caughtUp(), 'matcher caught up');

    const jobs = (await h.jobs()).filter((j) => j.webhookId === 'wh_emitter');
    expect(jobs.map((j) => [j.phase, j.payload.raw['logIndex']])).toEqual(
      logs.map((l) => ['unconfirmed', l.logIndex]),
    );
    expect(new Set(jobs.map((j) => j.eventId)).size).toBe(6);
    expect(jobs.map((j) => j.payload.raw)).toEqual(logs);
    expect(jobs[5]!.payload.raw).toMatchObject({ data: '0x', omitted: { data: 64 } });
  }, 60_000);
});
