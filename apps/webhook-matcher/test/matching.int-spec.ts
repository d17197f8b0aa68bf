import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { encodeFunctionData, type Abi } from 'viem';
import artifacts from './fixtures/test-tokens.artifact.json';
import { ChainFeed, MatcherHarness, rpc, sendMined, until, type Matcher } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const LISTED = '0x90f79bf6eb2c4f870365e785982e1f87e07fa4c3';
const BUSY = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
const TIGHT = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';
const FLIP = '0x976ea74026e726554db657fa54763abd0c3a0aa9';
const PAYEE = '0x14dc79964da2c08b23698b3d3cc7ca32193d9955';
const BACKLOG = '0x' + 'ba'.repeat(20);
const LIST = 'al_' + 'a'.repeat(24);
/** Network R of the local stack (chain id 204) under its key, as the indexer publishes it. */
const NETWORK = 'opbnb-mainnet';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let feed: ChainFeed;
let matcher: Matcher;

const send = (tx: Record<string, string>) => sendMined(anvil.url, tx);

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

/** Mines one block holding `txs`, stamped `timestamp` (unix seconds), then automines again. */
async function mineAt(timestamp: number, txs: Record<string, string>[]): Promise<void> {
  await rpc(anvil.url, 'evm_setAutomine', [false]);
  for (const tx of txs) await rpc(anvil.url, 'eth_sendTransaction', [tx]);
  await rpc(anvil.url, 'evm_mine', [timestamp]);
  await rpc(anvil.url, 'evm_setAutomine', [true]);
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
  matcher = await h.matcher();
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
        // Its confirmation was cancelled, never published: the worker waits for none.
        earlierPhases: ['unconfirmed'],
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
    // The bucket runs on block time: a block one second of chain later brings one more token,
    // so of its two events one passes and one is dropped.
    const dense = await feed.block(published);
    await mineAt(dense.timestamp + 1, [
      { from: DEPLOYER, to: BUSY, value: '0x99' },
      { from: DEPLOYER, to: BUSY, value: '0x98' },
    ]);
    await feedNewBlocks();
    expect(await jobsFor('wh_busy')).toHaveLength(13);
  }, 60_000);

  it('a backlog matched late is judged at the pace of its blocks: under the rate on-chain, none dropped', async () => {
    // QA: a matcher restarted during 45 tx/s on a Premium account, then matched the blocks it
    // missed in one go; the budget ran on the matcher's clock and dropped what the burst could
    // not hold. Here 30 s of blocks at the rate (5 events a second, burst 60) are matched
    // only once all are mined, and the matcher's clock (h.clock) never moves while it does.
    await h.setEventCaps('acc_9', 5, 60);
    await h.createWebhook({
      id: 'wh_backlog',
      accountId: 'acc_9',
      network: NETWORK,
      addresses: [BACKLOG],
      phases: ['unconfirmed'],
    });
    const start = (await feed.block(await feed.head())).timestamp;
    for (let s = 1; s <= 30; s++)
      await mineAt(
        start + s,
        Array.from({ length: 5 }, (_, i) => ({
          from: DEPLOYER,
          to: BACKLOG,
          value: `0x${(s * 10 + i + 1).toString(16)}`,
        })),
      );
    await feedNewBlocks();
    expect(await jobsFor('wh_backlog')).toHaveLength(150);
    const dropped: unknown[] = await h.ds.query(
      `SELECT event_id FROM webhooks.matching_events WHERE webhook_id = 'wh_backlog' AND dropped`,
    );
    expect(dropped).toEqual([]);
    expect(
      await h.ds.query(
        `SELECT rate_limited_total AS n FROM webhooks.matching_rate_limited
          WHERE webhook_id = 'wh_backlog' AND rate_limited_total > 0`,
      ),
    ).toEqual([]);
  }, 120_000);

  it('tx_confirmation: a watched transaction hash, unconfirmed when mined, confirmed at its depth, removed on a reorg', async () => {
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    const confirmedHash = await rpc<string>(anvil.url, 'eth_sendTransaction', [
      { from: DEPLOYER, to: token20, data: call('TestToken20', 'transfer', [PAYEE, 1n]) },
    ]);
    await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: PAYEE, value: '0x5' }]);
    // Watched before it is mined: the change feed is read before every block.
    await h.createWebhook({
      id: 'wh_txconf',
      accountId: 'acc_5',
      network: NETWORK,
      triggerType: 'tx_confirmation',
      filters: { tx_hash: { in: [confirmedHash.toUpperCase().replace('0X', '0x')] } },
      confirmDepth: 3,
    });
    await h.createWebhook({
      id: 'wh_txconf_late',
      accountId: 'acc_5',
      network: NETWORK,
      triggerType: 'tx_confirmation',
      filters: { tx_hash: { in: [confirmedHash] } },
      confirmDepth: 3,
      phases: ['confirmed'],
    });
    await rpc(anvil.url, 'evm_mine');
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    const [mined] = await feedNewBlocks();
    let jobs = await jobsFor('wh_txconf');
    // The transaction only: neither the ERC-20 log it emitted nor the other transaction.
    expect(jobs.map((j) => [j.phase, j.payload.raw['hash']])).toEqual([
      ['unconfirmed', confirmedHash],
    ]);
    expect(jobs[0]!.payload).toMatchObject({
      type: 'tx_confirmation',
      network: NETWORK,
      block: { hash: mined!.hash },
    });
    expect(jobs[0]!.payload).not.toHaveProperty('decoded');
    expect(await jobsFor('wh_txconf_late')).toEqual([]);

    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await feedNewBlocks();
    expect(await jobsFor('wh_txconf')).toHaveLength(1);
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await feedNewBlocks();
    jobs = await jobsFor('wh_txconf');
    expect(jobs.map((j) => j.phase)).toEqual(['unconfirmed', 'confirmed']);
    expect(jobs[1]).toMatchObject({ eventId: jobs[0]!.eventId });
    expect((await jobsFor('wh_txconf_late')).map((j) => [j.phase, j.eventId])).toEqual([
      ['confirmed', expect.stringMatching(/^ev_/)],
    ]);

    // A second watched transaction mined and then reorged out: removed, never confirmed.
    const ancestor = await feed.block(await feed.head());
    const receipt = await send({ from: DEPLOYER, to: PAYEE, value: '0x6' });
    await h.ds.query(
      `UPDATE webhooks.webhooks SET filter_tree = jsonb_build_object('tx_hash',
         jsonb_build_object('in', jsonb_build_array($2::text, $3::text))) WHERE id = $1`,
      ['wh_txconf', confirmedHash, receipt['transactionHash']],
    );
    await h.ds.query(
      `INSERT INTO webhooks.change_log (account_id, webhook_id) VALUES ('acc_5', 'wh_txconf')`,
    );
    const [orphan] = await feedNewBlocks();
    const unconfirmed = (await jobsFor('wh_txconf')).at(-1)!;
    expect(unconfirmed).toMatchObject({ phase: 'unconfirmed' });
    expect(unconfirmed.payload.raw['hash']).toBe(receipt['transactionHash']);
    await rpc(anvil.url, 'anvil_reorg', [1, []]);
    const branch = await feed.publishReorg([orphan!], ancestor);
    published = branch.at(-1)!.number;
    await rpc(anvil.url, 'anvil_mine', ['0x3']);
    await feedNewBlocks();
    const after = (await jobsFor('wh_txconf')).filter((j) => j.eventId === unconfirmed.eventId);
    expect(after.map((j) => j.phase)).toEqual(['unconfirmed', 'removed']);
  }, 90_000);

  it('removed also for an event this webhook never received (dropped by the budget)', async () => {
    await h.setEventCaps('acc_6', 1, 1);
    await h.createWebhook({
      id: 'wh_tight',
      accountId: 'acc_6',
      network: NETWORK,
      addresses: [TIGHT],
      confirmDepth: 3,
    });
    const ancestor = await feed.block(await feed.head());
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    for (let i = 0; i < 3; i++)
      await rpc(anvil.url, 'eth_sendTransaction', [
        { from: DEPLOYER, to: TIGHT, value: `0x${(i + 1).toString(16)}` },
      ]);
    await rpc(anvil.url, 'evm_mine');
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    const [orphan] = await feedNewBlocks();
    const received = await jobsFor('wh_tight');
    expect(received.map((j) => j.phase)).toEqual(['unconfirmed']);
    const rows: Array<{ event_id: string; dropped: boolean }> = await h.ds.query(
      `SELECT event_id, dropped FROM webhooks.matching_events WHERE webhook_id = 'wh_tight'`,
    );
    expect(rows.filter((r) => r.dropped)).toHaveLength(2);

    await rpc(anvil.url, 'anvil_reorg', [1, []]);
    const branch = await feed.publishReorg([orphan!], ancestor);
    published = branch.at(-1)!.number;
    await rpc(anvil.url, 'anvil_mine', ['0x3']);
    await feedNewBlocks();
    const jobs = await jobsFor('wh_tight');
    const removed = jobs.filter((j) => j.phase === 'removed');
    // All three, the two never sent included, with the eventIds they were recorded under.
    expect(removed.map((j) => j.eventId).sort()).toEqual(rows.map((r) => r.event_id).sort());
    expect(removed.every((j) => j.payload.removed && !j.payload.confirmed)).toBe(true);
    // The one received names its unconfirmed delivery; the two dropped name no phase.
    expect(removed.map((j) => j.earlierPhases!.join()).sort()).toEqual(['', '', 'unconfirmed']);
    expect(jobs.filter((j) => j.phase === 'confirmed')).toEqual([]);
    expect(
      await h.ds.query(
        `SELECT rate_limited_total AS n FROM webhooks.matching_rate_limited WHERE webhook_id = 'wh_tight'`,
      ),
    ).toEqual([{ n: '2' }]);
  }, 60_000);

  it('a block the chain leaves and returns to: its events come back as new occurrences, unconfirmed then confirmed', async () => {
    await h.createWebhook({
      id: 'wh_flip',
      accountId: 'acc_7',
      network: NETWORK,
      addresses: [FLIP],
      confirmDepth: 2,
    });
    const ancestor = await feed.block(await feed.head());
    await send({ from: DEPLOYER, to: FLIP, value: '0x7' });
    const [b] = await feedNewBlocks();
    const [first] = await jobsFor('wh_flip');
    expect(first).toMatchObject({ phase: 'unconfirmed' });

    // The chain moves to b' …
    await rpc(anvil.url, 'anvil_reorg', [1, []]);
    const [bPrime] = await feed.publishReorg([b!], ancestor);
    await until(() => h.caughtUp(), 'reorg to the other branch');
    // … and back to b (a node flapping between two branches), which then gets a child.
    await feed.publishRemoval([bPrime!], ancestor, b!);
    await feed.publishBlock(b!);
    const child = feed.childOf(b!);
    await feed.publishBlock(child);
    await until(() => h.caughtUp(), 'back on the first branch');

    const jobs = await jobsFor('wh_flip');
    expect(jobs.map((j) => j.phase)).toEqual([
      'unconfirmed',
      'removed',
      'unconfirmed',
      'confirmed',
    ]);
    const [, removed, again, confirmed] = jobs;
    expect(removed!.eventId).toBe(first!.eventId);
    // A new occurrence: a new eventId (receivers de-duplicate on eventId + phase), new job ids.
    expect(again!.eventId).not.toBe(first!.eventId);
    expect(again!.id).toBe(`wh_flip:${again!.eventId}:unconfirmed`);
    expect(confirmed!.eventId).toBe(again!.eventId);
    expect(again!.payload).toMatchObject({
      block: { hash: b!.hash },
      raw: { hash: first!.payload.raw['hash'] },
      confirmed: false,
      removed: false,
    });

    // Back to the node's branch: the second occurrence is removed, the first not corrected twice.
    const duplicatesBefore = matcher.jobs.duplicates;
    await feed.publishRemoval([b!, child], ancestor, bPrime!);
    await feed.publishBlock(bPrime!);
    await until(() => h.caughtUp(), 'back on the node branch');
    const last = (await jobsFor('wh_flip')).slice(jobs.length);
    expect(last.map((j) => [j.phase, j.eventId])).toEqual([['removed', again!.eventId]]);
    expect(matcher.jobs.duplicates).toBe(duplicatesBefore);
  }, 60_000);

  it('never publishes a job twice (job ids unique across the whole run)', async () => {
    const ids = (await h.jobs()).map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
