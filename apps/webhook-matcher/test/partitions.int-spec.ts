import { partitionOf, type Partition } from '@meridian/contracts';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { ChainFeed, MatcherHarness, rpc, until } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const P0: Partition = { index: 0, count: 2 };
const P1: Partition = { index: 1, count: 2 };

const h = new MatcherHarness();
let anvil: AnvilInstance;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 137 });
  await h.start([P0, P1]);
}, 60_000);

afterAll(async () => {
  await h.stop();
  await anvil.stop();
});

it('two replicas on one stream share the accounts and publish every job exactly once', async () => {
  const accounts = Array.from({ length: 8 }, (_, i) => `acc_${i}`);
  expect(new Set(accounts.map((a) => partitionOf(a, 2))).size).toBe(2);
  for (const account of accounts)
    await h.createWebhook({
      id: `wh_${account}`,
      accountId: account,
      network: 'polygon-mainnet',
      addresses: [WATCHED],
      phases: ['unconfirmed', 'confirmed'],
    });
  const [r0, r1] = [await h.matcher(P0), await h.matcher(P1)];
  expect(r0.engine.index.webhookCount + r1.engine.index.webhookCount).toBe(accounts.length);
  expect(r0.engine.index.webhookCount).toBeGreaterThan(0);
  expect(r1.engine.index.webhookCount).toBeGreaterThan(0);

  const feed = new ChainFeed(anvil.url, 'polygon-mainnet', h.publisher);
  for (let i = 0; i < 3; i++)
    await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x1' }]);
  await rpc(anvil.url, 'anvil_mine', ['0x2']);
  await feed.publishRange(1, await feed.head());
  await until(async () => (await h.caughtUp(P0)) && (await h.caughtUp(P1)), 'both replicas');

  const jobs = await h.jobs();
  const ids = jobs.map((j) => j.id);
  expect(new Set(ids).size).toBe(ids.length);
  // The stream would drop a second copy by its id; the replicas must not even try.
  expect(r0.jobs.duplicates + r1.jobs.duplicates).toBe(0);
  expect(r0.jobs.published + r1.jobs.published).toBe(48);
  expect(r0.jobs.published).toBeGreaterThan(0);
  expect(r1.jobs.published).toBeGreaterThan(0);
  // 3 transfers × 8 webhooks × (unconfirmed + confirmed at depth 2).
  expect(jobs.filter((j) => j.phase === 'unconfirmed')).toHaveLength(24);
  expect(jobs.filter((j) => j.phase === 'confirmed')).toHaveLength(24);
  for (const account of accounts)
    expect(jobs.filter((j) => j.accountId === account)).toHaveLength(6);
}, 60_000);
