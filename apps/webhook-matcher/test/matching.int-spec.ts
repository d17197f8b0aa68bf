import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { encodeFunctionData, type Abi } from 'viem';
import artifacts from './fixtures/test-tokens.artifact.json';
import { ChainFeed, MatcherHarness, rpc, until } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const LISTED = '0x90f79bf6eb2c4f870365e785982e1f87e07fa4c3';
const BUSY = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
const LIST = 'al_' + 'a'.repeat(24);
const NETWORK = 'R';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let feed: ChainFeed;

async function send(tx: Record<string, string>): Promise<Record<string, unknown>> {
  const hash = await rpc<string>(anvil.url, 'eth_sendTransaction', [tx]);
  return until(
    () =>
      rpc<Record<string, unknown> | null>(anvil.url, 'eth_getTransactionReceipt', [hash]).then(
        (r) => r ?? undefined,
      ),
    'receipt',
  );
}

async function deploy(name: 'TestToken20' | 'TestToken721'): Promise<string> {
  const receipt = await send({ from: DEPLOYER, data: artifacts[name].bytecode });
  return receipt['contractAddress'] as string;
}

const call = (name: 'TestToken20' | 'TestToken721', fn: string, args: unknown[]) =>
  encodeFunctionData({ abi: artifacts[name].abi as Abi, functionName: fn, args });

/** Publishes every block since the last call and waits until the matcher acked them. */
let published = 0;
async function feedNewBlocks() {
  const head = await feed.head();
  const blocks = await feed.publishRange(published + 1, head);
  published = head;
  await until(() => h.caughtUp(), 'matcher caught up');
  return blocks;
}

const jobsFor = async (webhookId: string) =>
  (await h.jobs()).filter((j) => j.webhookId === webhookId);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 204 });
  await h.start();
  await h.createWebhook({
    id: 'wh_watch',
    accountId: 'acc_1',
    network: NETWORK,
    addresses: [WATCHED],
  });
  await h.matcher();
  feed = new ChainFeed(anvil.url, NETWORK, h.publisher);
}, 60_000);

afterAll(async () => {
  await h.stop();
  await anvil.stop();
});

describe('matching real anvil blocks', () => {
  let token20: string;
  let token721: string;

  it('native, ERC-20 and ERC-721 transfers to a watched address: unconfirmed at once, confirmed at depth', async () => {
    token20 = await deploy('TestToken20');
    token721 = await deploy('TestToken721');
    await feedNewBlocks();
    const native = await send({ from: DEPLOYER, to: WATCHED, value: '0x1000' });
    const erc20 = await send({
      from: DEPLOYER,
      to: token20,
      data: call('TestToken20', 'transfer', [WATCHED, 5000n]),
    });
    const erc721 = await send({
      from: DEPLOYER,
      to: token721,
      data: call('TestToken721', 'mint', [WATCHED, 7n]),
    });
    const [b1, b2, b3] = await feedNewBlocks();

    const jobs = await jobsFor('wh_watch');
    expect(
      jobs.map((j) => [
        j.phase,
        j.payload.block.hash,
        j.payload.raw['transactionHash'] ?? j.payload.raw['hash'],
      ]),
    ).toEqual([
      ['unconfirmed', b1!.hash, native['transactionHash']],
      ['unconfirmed', b2!.hash, erc20['transactionHash']],
      ['confirmed', b1!.hash, native['transactionHash']],
      ['unconfirmed', b3!.hash, erc721['transactionHash']],
      ['confirmed', b2!.hash, erc20['transactionHash']],
    ]);
    expect(jobs[1]!.payload).toMatchObject({
      type: 'address_activity',
      network: NETWORK,
      confirmed: false,
      removed: false,
      decoded: {
        standard: 'erc20',
        event: 'Transfer',
        from: DEPLOYER,
        to: WATCHED,
        value: '0x1388',
      },
    });
    expect(jobs[3]!.payload.decoded).toEqual({
      standard: 'erc721',
      event: 'Transfer',
      from: '0x' + '0'.repeat(40),
      to: WATCHED,
      tokenId: '0x7',
    });
    expect(jobs[4]).toMatchObject({
      eventId: jobs[1]!.eventId,
      id: `wh_watch:${jobs[1]!.eventId}:confirmed`,
    });
    expect(jobs[4]!.payload).toMatchObject({ confirmed: true, removed: false });
    // Depth 2 for the last one: the next block confirms it.
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await feedNewBlocks();
    const last = (await jobsFor('wh_watch')).at(-1)!;
    expect(last).toMatchObject({ phase: 'confirmed', eventId: jobs[3]!.eventId });
  }, 60_000);

  it('a reorg of depth 1 and of depth 2: removed with the same eventId, confirmed cancelled, re-included tx is a new event', async () => {
    await h.ds.query(`UPDATE webhooks.webhooks SET confirm_depth = 4 WHERE id = 'wh_watch'`);
    await h.ds.query(
      `INSERT INTO webhooks.change_log (account_id, webhook_id) VALUES ('acc_1', 'wh_watch')`,
    );
    const ancestor = await feed.block(await feed.head());
    await send({ from: DEPLOYER, to: WATCHED, value: '0x2000' });
    const [orphan] = await feedNewBlocks();
    const before = await jobsFor('wh_watch');
    const unconfirmed = before.at(-1)!;
    expect(unconfirmed).toMatchObject({ phase: 'unconfirmed' });
    expect(unconfirmed.payload.block.hash).toBe(orphan!.hash);

    await rpc(anvil.url, 'anvil_reorg', [1, []]);
    const branch = await feed.publishReorg([orphan!], ancestor);
    published = branch.at(-1)!.number;
    await until(() => h.caughtUp(), 'reorg handled');
    const removed = (await jobsFor('wh_watch')).slice(before.length);
    expect(removed).toEqual([
      expect.objectContaining({
        phase: 'removed',
        eventId: unconfirmed.eventId,
        id: `wh_watch:${unconfirmed.eventId}:removed`,
      }),
    ]);
    expect(removed[0]!.payload).toMatchObject({ removed: true, confirmed: false });

    // Deeper: two blocks with events, the transfer of the first re-included in the new branch.
    const ancestor2 = await feed.block(await feed.head());
    const nonce = await rpc<string>(anvil.url, 'eth_getTransactionCount', [DEPLOYER, 'latest']);
    await send({ from: DEPLOYER, to: WATCHED, value: '0x3000' });
    await send({ from: DEPLOYER, to: WATCHED, value: '0x4000' });
    const orphans = await feedNewBlocks();
    const mark = (await jobsFor('wh_watch')).length;
    const orphanEvents = (await jobsFor('wh_watch')).slice(mark - 2);
    expect(orphanEvents.map((j) => j.phase)).toEqual(['unconfirmed', 'unconfirmed']);
    await rpc(anvil.url, 'anvil_reorg', [
      2,
      [[{ from: DEPLOYER, to: WATCHED, value: '0x3000', nonce }, 1]],
    ]);
    const branch2 = await feed.publishReorg(orphans, ancestor2);
    published = branch2.at(-1)!.number;
    await until(() => h.caughtUp(), 'deep reorg handled');
    await rpc(anvil.url, 'anvil_mine', ['0x4']);
    await feedNewBlocks();

    const after = (await jobsFor('wh_watch')).slice(mark);
    const removedIds = after.filter((j) => j.phase === 'removed').map((j) => j.eventId);
    expect(removedIds.sort()).toEqual(orphanEvents.map((j) => j.eventId).sort());
    const all = await jobsFor('wh_watch');
    // No confirmed delivery for any orphaned event.
    for (const e of [unconfirmed, ...orphanEvents])
      expect(all.filter((j) => j.eventId === e.eventId && j.phase === 'confirmed')).toEqual([]);
    // The re-included transfer: a new event in the new branch, unconfirmed then confirmed.
    const reincluded = after.filter(
      (j) => j.phase !== 'removed' && (j.payload.raw['value'] as string) === '0x3000',
    );
    expect(reincluded.map((j) => j.phase)).toEqual(['unconfirmed', 'confirmed']);
    expect(reincluded[0]!.eventId).not.toBe(orphanEvents[0]!.eventId);
    expect(branch2.map((b) => b.hash)).toContain(reincluded[0]!.payload.block.hash);
  }, 90_000);

  it('an address added to a list is matched from the next block on; a paused webhook stops matching', async () => {
    await h.createList('acc_2', LIST, []);
    await h.createWebhook({
      id: 'wh_list',
      accountId: 'acc_2',
      network: NETWORK,
      listRefs: [LIST],
      phases: ['unconfirmed'],
    });
    await send({ from: DEPLOYER, to: LISTED, value: '0x1' });
    await feedNewBlocks();
    expect(await jobsFor('wh_list')).toEqual([]);
    await h.addToList('acc_2', LIST, [LISTED]);
    await send({ from: DEPLOYER, to: LISTED, value: '0x2' });
    const [block] = await feedNewBlocks();
    expect((await jobsFor('wh_list')).map((j) => j.payload.block.hash)).toEqual([block!.hash]);

    await h.setStatus('acc_2', 'wh_list', 'paused');
    // The feed is read before every block: the next block no longer matches it.
    await send({ from: DEPLOYER, to: LISTED, value: '0x3' });
    await feedNewBlocks();
    expect(await jobsFor('wh_list')).toHaveLength(1);
  }, 60_000);

  it('the account budget drops events above rate + burst and counts them', async () => {
    await h.setEventCaps('acc_3', 1, 12);
    await h.createWebhook({
      id: 'wh_busy',
      accountId: 'acc_3',
      network: NETWORK,
      addresses: [BUSY],
      phases: ['unconfirmed'],
    });
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    for (let i = 0; i < 20; i++)
      await rpc(anvil.url, 'eth_sendTransaction', [
        { from: DEPLOYER, to: BUSY, value: `0x${(i + 1).toString(16)}` },
      ]);
    await rpc(anvil.url, 'evm_mine');
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    await feedNewBlocks();
    expect(await jobsFor('wh_busy')).toHaveLength(12);
    const rows: { n: string }[] = await h.ds.query(
      `SELECT rate_limited_total AS n FROM webhooks.matching_rate_limited WHERE webhook_id = 'wh_busy'`,
    );
    expect(Number(rows[0]!.n)).toBe(8);
    // One second later one more token: the next event passes, the one after is dropped.
    h.clock.advance(1_000);
    await send({ from: DEPLOYER, to: BUSY, value: '0x99' });
    await send({ from: DEPLOYER, to: BUSY, value: '0x98' });
    await feedNewBlocks();
    expect(await jobsFor('wh_busy')).toHaveLength(13);
  }, 60_000);

  it('never publishes a job twice (job ids unique across the whole run)', async () => {
    const ids = (await h.jobs()).map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
