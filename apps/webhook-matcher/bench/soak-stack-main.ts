import { startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import {
  BENCH_ACCOUNT,
  loadFixtures,
  prepareBenchDatabase,
  rpc,
  startIndexer,
  startMatcherApp,
  WATCHED,
  type Child,
} from './app-process';

/**
 * The matcher soak's stack (`bench/soak/matcher.ts` runs it as a child process; bench code may
 * not import an app's bench code): the real webhook-matcher app on a test database holding
 * 1,000 webhooks × 1,000 addresses (app-process.ts fixtures), an anvil devnet without automine
 * and the real chain-indexer on it. Once the index is loaded and the indexer has subscribed,
 * prints one JSON line `{"stack": …}` (pids, devnet URL, NATS namespace, one watched address of
 * every list); stops everything when stdin closes or on SIGTERM.
 */
const WEBHOOKS = 1_000;
const PER_LIST = 1_000;

async function main(): Promise<void> {
  const { db, prefix, ds, dispose } = await prepareBenchDatabase();
  const children: Child[] = [];
  let anvil: AnvilInstance | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const child of children.reverse()) await child.stop();
      await anvil?.stop();
      await dispose();
    })());
  process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
  process.stdin.on('end', () => void stop().then(() => process.exit(0)));
  process.stdin.resume();
  try {
    await loadFixtures(ds, WEBHOOKS, PER_LIST);
    const started = performance.now();
    const app = await startMatcherApp(db, prefix);
    children.push(app);
    await app.waitFor('match index loaded', 600_000);
    const loadMs = performance.now() - started;
    const loaded = JSON.parse(app.lines.find((l) => l.includes('match index loaded'))!) as {
      addresses: number;
      webhooks: number;
    };
    anvil = await startAnvil({ chainId: 1 });
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    const indexer = await startIndexer(db, prefix, anvil.url);
    children.push(indexer);
    const listAddresses = (
      (await ds.query(
        `SELECT DISTINCT ON (list_id) address FROM webhooks.address_list_entries
          ORDER BY list_id, address`,
      )) as { address: string }[]
    ).map((r) => r.address);
    process.stdout.write(
      `${JSON.stringify({
        stack: {
          matcherPid: app.process.pid,
          indexerPid: indexer.process.pid,
          anvilUrl: anvil.url,
          natsUrl: testNatsUrl(),
          natsPrefix: prefix,
          addresses: loaded.addresses,
          webhooks: loaded.webhooks,
          loadMs,
          latencyAccount: BENCH_ACCOUNT,
          watched: WATCHED,
          listAddresses,
        },
      })}\n`,
    );
  } catch (error) {
    process.stderr.write(`matcher soak stack failed: ${String(error)}\n`);
    await stop();
    process.exit(1);
  }
}

void main();
