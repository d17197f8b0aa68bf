import { KvBuckets } from '@meridian/contracts';
import {
  freePort,
  runAppScript,
  startAnvil,
  startAppProcess,
  testNatsUrl,
  type AnvilInstance,
  type AppProcess,
} from '@meridian/testing';
import { MatcherHarness, rpc, until } from './matcher-harness';

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
/** Network R of the local stack (chain id 204), as the indexer's NETWORKS and the API name it. */
const NETWORK = 'opbnb-mainnet';

const h = new MatcherHarness();
let anvil: AnvilInstance;
let indexer: AppProcess | undefined;

const jobsFor = async (webhookId: string) =>
  (await h.jobs()).filter((j) => j.webhookId === webhookId);

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 204 });
  await h.start(undefined, [KvBuckets.indexerLeases]);
  await runAppScript('apps/chain-indexer/src/migrate.ts', { DATABASE_URL: h.db.url });
  await h.createWebhook({
    id: 'wh_real',
    accountId: 'acc_1',
    network: NETWORK,
    addresses: [WATCHED],
    confirmDepth: 2,
  });
  await h.matcher();
  indexer = await startAppProcess(async () => {
    const port = await freePort();
    return {
      main: 'apps/chain-indexer/src/main.ts',
      env: {
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        DATABASE_URL: h.db.url,
        NATS_URL: testNatsUrl(),
        NATS_PREFIX: h.prefix,
        LOG_LEVEL: 'info',
        POLL_INTERVAL_MS: '200',
        LEASE_TTL_MS: '3000',
        NETWORKS: NETWORK,
        UPSTREAMS: JSON.stringify({ [NETWORK]: [anvil.url] }),
      },
      // /healthz answers once the app listens (it logs `chain-indexer listening` then).
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      startTimeoutMs: 120_000,
    };
  });
  // A network first seen starts at the node's head: wait until the indexer published it, so
  // the blocks of the test are all followed.
  await until(
    async () => (await h.jsm.streams.info(h.ns.stream('CHAIN'))).state.messages > 0,
    'the indexer on the head',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  await indexer?.stop();
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
