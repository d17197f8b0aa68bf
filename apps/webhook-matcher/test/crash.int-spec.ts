import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { ChainFeed, MatcherHarness, rpc, until } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const TRANSFERS = 40;

const h = new MatcherHarness();
let anvil: AnvilInstance;
const children: ChildProcess[] = [];

function startMatcher(): Promise<ChildProcess> {
  const root = join(__dirname, '../../..');
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'matcher-child.ts'), h.db.url, h.prefix],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`matcher child exited with ${code}`)));
  });
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 });
  await h.start();
}, 60_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await h.stop();
  await anvil.stop();
});

it('kill -9 of the matcher mid-stream loses no event and publishes none twice', async () => {
  await h.setEventCaps('acc_1', 1_000, 12_000);
  await h.createWebhook({
    id: 'wh_crash',
    accountId: 'acc_1',
    network: 'eth-mainnet',
    addresses: [WATCHED],
  });
  for (let i = 0; i < TRANSFERS; i++)
    await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x1' }]);
  await rpc(anvil.url, 'anvil_mine', ['0x2']);
  const feed = new ChainFeed(anvil.url, 'eth-mainnet', h.publisher);
  await feed.publishRange(1, await feed.head());

  const first = await startMatcher();
  await until(async () => (await h.jobs()).length >= 10, 'jobs before the crash', 60_000);
  first.kill('SIGKILL');
  const before = (await h.jobs()).length;
  expect(before).toBeLessThan(2 * TRANSFERS);

  await startMatcher();
  await until(() => h.caughtUp(), 'caught up after the restart', 90_000);
  const jobs = await h.jobs();
  const ids = jobs.map((j) => j.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(jobs.filter((j) => j.phase === 'unconfirmed')).toHaveLength(TRANSFERS);
  expect(jobs.filter((j) => j.phase === 'confirmed')).toHaveLength(TRANSFERS);
  const events = new Set(jobs.map((j) => j.eventId));
  expect(events.size).toBe(TRANSFERS);
}, 180_000);
