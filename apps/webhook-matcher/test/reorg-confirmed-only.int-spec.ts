import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { ChainFeed, MatcherHarness, rpc, sendMined, until, type Matcher } from './matcher-harness';

/**
 * QA: two webhooks on one address with confirm_depth 2, one `phases: ["confirmed"]`, one with
 * both; a transfer, then a reorg 8 blocks deep. The both-phases receiver got unconfirmed,
 * confirmed and `removed: true`; the confirmed-only one got `confirmed: true` and never heard
 * that it was undone (ADR 0421 amendment "Removals reach confirmed-only webhooks").
 */
const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f';
const NETWORK = 'opbnb-mainnet';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let feed: ChainFeed;
let matcher: Matcher;

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
  for (const [id, phases, confirmDepth] of [
    ['wh_confirmed_only', ['confirmed'], 2],
    ['wh_both', ['unconfirmed', 'confirmed'], 2],
    // Confirmed-only and still pending when the reorg comes (depth 20 > the 8 blocks).
    ['wh_confirmed_deep', ['confirmed'], 20],
  ] as const)
    await h.createWebhook({
      id,
      accountId: 'acc_reorg',
      network: NETWORK,
      addresses: [WATCHED],
      confirmDepth,
      phases: [...phases],
    });
  matcher = await h.matcher();
  feed = new ChainFeed(anvil.url, NETWORK, h.publisher);
  published = await feed.head();
}, 60_000);

afterAll(async () => {
  await h.stop();
  await anvil.stop();
});

it('a reorg deeper than confirm_depth sends removed to the confirmed-only webhook that was told confirmed; one still pending is cancelled and told nothing', async () => {
  const ancestor = await feed.block(await feed.head());
  await sendMined(anvil.url, { from: DEPLOYER, to: WATCHED, value: '0x5' });
  await rpc(anvil.url, 'anvil_mine', ['0x7']);
  const orphans = await feedNewBlocks();
  expect(orphans).toHaveLength(8);

  const both = await jobsFor('wh_both');
  const confirmedOnly = await jobsFor('wh_confirmed_only');
  expect(both.map((j) => j.phase)).toEqual(['unconfirmed', 'confirmed']);
  expect(confirmedOnly.map((j) => j.phase)).toEqual(['confirmed']);
  expect(await jobsFor('wh_confirmed_deep')).toEqual([]);
  const [deepRow] = await h.ds.query(
    `SELECT event_id, state FROM webhooks.matching_events WHERE webhook_id = 'wh_confirmed_deep'`,
  );
  expect(deepRow).toMatchObject({ state: 'pending' });

  // 8 blocks deep: every orphaned block replaced by an empty one.
  await rpc(anvil.url, 'anvil_reorg', [8, []]);
  const branch = await feed.publishReorg(orphans, ancestor);
  published = branch.at(-1)!.number;
  await until(() => h.caughtUp(), 'reorg handled');
  // The new branch buries the old height far below depth 20: nothing confirms for it.
  await rpc(anvil.url, 'anvil_mine', ['0x14']);
  await feedNewBlocks();

  const eventId = confirmedOnly[0]!.eventId;
  expect((await jobsFor('wh_confirmed_only')).map((j) => [j.phase, j.id])).toEqual([
    ['confirmed', `wh_confirmed_only:${eventId}:confirmed`],
    ['removed', `wh_confirmed_only:${eventId}:removed`],
  ]);
  const removal = (await jobsFor('wh_confirmed_only'))[1]!;
  expect(removal.payload).toMatchObject({
    eventId,
    webhookId: 'wh_confirmed_only',
    removed: true,
    confirmed: false,
    block: { hash: orphans[0]!.hash },
  });
  expect(removal.earlierPhases).toEqual(['confirmed']);
  // The both-phases webhook: unchanged, its three deliveries under one eventId, each naming the
  // phases published before it.
  expect((await jobsFor('wh_both')).map((j) => [j.phase, j.earlierPhases])).toEqual([
    ['unconfirmed', []],
    ['confirmed', ['unconfirmed']],
    ['removed', ['unconfirmed', 'confirmed']],
  ]);
  // Pending confirmation cancelled: no confirmed, no removed, the row removed.
  expect(await jobsFor('wh_confirmed_deep')).toEqual([]);
  expect(
    await h.ds.query(
      `SELECT state FROM webhooks.matching_events WHERE webhook_id = 'wh_confirmed_deep'`,
    ),
  ).toEqual([{ state: 'removed' }]);

  // The same blocks reported removed again (a second removal message naming them): no second
  // correction, no job the stream had to refuse.
  const duplicatesBefore = matcher.jobs.duplicates;
  const jobsBefore = (await h.jobs()).length;
  await feed.publishRemoval(orphans, ancestor, branch.at(-1)!);
  await until(() => h.caughtUp(), 'second removal handled');
  expect((await h.jobs()).length).toBe(jobsBefore);
  expect(matcher.jobs.duplicates).toBe(duplicatesBefore);
  const ids = (await h.jobs()).map((j) => j.id);
  expect(new Set(ids).size).toBe(ids.length);
}, 90_000);
