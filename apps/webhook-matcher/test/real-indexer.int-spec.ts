import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { KvBuckets } from '@meridian/contracts';
import { freePort, startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import { MatcherHarness, rpc, until } from './matcher-harness';

const ROOT = join(__dirname, '../../..');
const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
/** Network R of the local stack (chain id 204), as the indexer's NETWORKS and the API name it. */
const NETWORK = 'opbnb-mainnet';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let indexer: ChildProcess | undefined;

function run(script: string, env: Record<string, string>, ready?: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      ready === undefined && code === 0
        ? resolve(child)
        : reject(new Error(`${script} exited with ${code}`)),
    );
    if (ready === undefined) return;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes(ready)) resolve(child);
    });
  });
}

const jobsFor = async (webhookId: string) =>
  (await h.jobs()).filter((j) => j.webhookId === webhookId);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 204 });
  await h.start(undefined, [KvBuckets.indexerLeases]);
  await run('apps/chain-indexer/src/migrate.ts', { DATABASE_URL: h.db.url });
  await h.createWebhook({
    id: 'wh_real',
    accountId: 'acc_1',
    network: NETWORK,
    addresses: [WATCHED],
    confirmDepth: 2,
  });
  await h.matcher();
  indexer = await run(
    'apps/chain-indexer/src/main.ts',
    {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      DATABASE_URL: h.db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: h.prefix,
      LOG_LEVEL: 'info',
      POLL_INTERVAL_MS: '200',
      LEASE_TTL_MS: '3000',
      NETWORKS: NETWORK,
      UPSTREAMS: JSON.stringify({ [NETWORK]: [anvil.url] }),
    },
    'chain-indexer listening',
  );
  // A network first seen starts at the node's head: wait until the indexer published it, so
  // the blocks of the test are all followed.
  await until(
    async () => (await h.jsm.streams.info(h.ns.stream('CHAIN'))).state.messages > 0,
    'the indexer on the head',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  if (indexer && indexer.exitCode === null) {
    const exited = new Promise((resolve) => indexer!.once('exit', resolve));
    indexer.kill('SIGTERM');
    await exited;
  }
  await h.stop();
  await anvil.stop();
});

it('blocks and removals published by the real chain-indexer reach a webhook created under the network key', async () => {
  const hash = await rpc<string>(anvil.url, 'eth_sendTransaction', [
    { from: DEPLOYER, to: WATCHED, value: '0x1' },
  ]);
  await rpc(anvil.url, 'anvil_mine', ['0x1']);
  const jobs = await until(
    async () => {
      const all = await jobsFor('wh_real');
      return all.length >= 2 && all;
    },
    'unconfirmed and confirmed jobs from indexed blocks',
    60_000,
  );
  const receipt = await rpc<Record<string, string>>(anvil.url, 'eth_getTransactionReceipt', [hash]);
  expect(jobs.map((j) => j.phase)).toEqual(['unconfirmed', 'confirmed']);
  expect(jobs[0]!.payload).toMatchObject({
    network: NETWORK,
    block: { hash: receipt['blockHash'], number: receipt['blockNumber'] },
    raw: { hash },
  });

  // A reorg the indexer detects: removed, same eventId.
  await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x2' }]);
  const second = await until(async () => (await jobsFor('wh_real'))[2], 'third job', 60_000);
  expect(second.phase).toBe('unconfirmed');
  await rpc(anvil.url, 'anvil_reorg', [1, []]);
  await rpc(anvil.url, 'anvil_mine', ['0x1']);
  const removed = await until(async () => (await jobsFor('wh_real'))[3], 'removed job', 60_000);
  expect(removed).toMatchObject({ phase: 'removed', eventId: second.eventId });
}, 180_000);
